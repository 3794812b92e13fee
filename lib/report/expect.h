#pragma once
// The documents' printed values beside ours. An Expectation names a table, the
// row(s) it applies to (column = value pairs), and the values the document
// prints for some columns, with a tolerance. apply_expectations adds to that
// table a "<column>_doc" column (its terminal label "<column> (doc)") after
// each expected column and a final
// "verdict" column (pass / miss, or n/a where the expectation does not apply)
// for the rows an expectation covers.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "report/table.h"

namespace ffn::report {

struct Expectation {
    std::string table;
    std::vector<std::pair<std::string, Cell>> where;   // row selector
    std::vector<std::pair<std::string, Cell>> values;  // column -> document's value
    double atol = 0.0;  // numbers: pass when |ours - doc| <= atol + rtol * |doc|
    double rtol = 0.0;
    std::string source;  // e.g. "001": the document it comes from
    std::string origin;  // "configs/params.json: expect[2]" for error messages
    // False when the plan does not hold what the expectation's 'given'
    // names: its rows then show no document value and read "n/a" (as do
    // rows the caller's `applies` refuses: those off the protocol).
    bool applies = true;
};

// Counts of document values (not rows) within / outside their tolerance.
struct ExpectSummary {
    int passed = 0;
    int missed = 0;
    int not_judged = 0;  // values whose expectation does not apply to this run
    std::vector<std::string> unmatched;  // origins of expectations whose 'where' selected no row
};

// Throws ffn::Error (naming the expectation's origin) when a table or column
// does not exist. An expectation whose rows are absent (a --set narrowed the
// sweep) is listed in `unmatched` instead: nothing to compare, not a miss.
// `applies(e, table, row)`, when given, says whether the row was computed
// under the protocol e's document value was printed for.
using RowApplies = std::function<bool(const Expectation&, const Table&, std::size_t)>;
ExpectSummary apply_expectations(std::vector<Table>& tables, const std::vector<Expectation>& expectations,
                                 const RowApplies& applies = {});

// The cells of every "verdict" column: "pass", "miss", and "n/a" (with or
// without a reason after it). What `sweep --check` judges.
struct VerdictCounts {
    int pass = 0, miss = 0, not_applicable = 0;
};
VerdictCounts count_verdicts(const std::vector<Table>& tables);

}  // namespace ffn::report
