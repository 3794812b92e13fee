#pragma once
// Which of a run's tables, and which of their columns, a command prints:
// one rule for `sweep` and `merge`, on a terminal and into a pipe alike.
//
// - Named tables (--table): exactly those, in the order named; an unknown
//   name is refused, listing the tables there are.
// - Otherwise every table, but a long one (a row per run or per logged
//   step, Table::long_form) only when `everything` is asked (an explicit
//   --format): in its place a note says how to get it. So a pipe gets the
//   tables a terminal shows.
// - Columns (--columns) apply to the tables they name: a table shows the
//   named columns it has, and a table none of whose own columns is named
//   (its key columns aside, such as a runs table's model.width) is left
//   out. A name no table has is refused with a did-you-mean.
#include <memory>
#include <string>
#include <vector>

#include "report/table.h"

namespace ffn::report {

struct Selection {
    std::vector<std::string> tables;   // empty: the rule above
    std::vector<std::string> columns;  // empty: every column
    bool everything = false;
};

struct Selected {
    // The tables to print, in order: the caller's own where no column is
    // cut (a sweep's per-run table is not copied to be held back), else a
    // cut copy held in `cut`. Valid while the caller's tables are.
    std::vector<const Table*> tables;
    // For each entry of `tables`, a line to print instead of its rows
    // ("500 rows, one per run...: --table runs prints them"), or "".
    std::vector<std::string> instead;
    std::vector<std::unique_ptr<Table>> cut;
};

// `kind` names the experiment in error messages. Throws ffn::Error.
Selected select_tables(const std::vector<Table>& tables, const Selection& s, const std::string& kind);

}  // namespace ffn::report
