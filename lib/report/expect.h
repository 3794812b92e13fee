#pragma once
// The documents' printed values beside ours. An Expectation names a table, the
// row(s) it applies to (column = value pairs), and the values the document
// prints for some columns, with a tolerance. apply_expectations adds to that
// table a "<column> (doc)" column after each expected column and a final
// "verdict" column (pass / miss) for the rows an expectation covers.
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
};

// Counts of document values (not rows) within / outside their tolerance.
struct ExpectSummary {
    int passed = 0;
    int missed = 0;
    std::vector<std::string> unmatched;  // origins of expectations whose 'where' selected no row
};

// Throws ffn::Error (naming the expectation's origin) when a table or column
// does not exist. An expectation whose rows are absent (a --set narrowed the
// sweep) is listed in `unmatched` instead: nothing to compare, not a miss.
ExpectSummary apply_expectations(std::vector<Table>& tables, const std::vector<Expectation>& expectations);

}  // namespace ffn::report
