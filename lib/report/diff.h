#pragma once
// Cell-by-cell comparison of result tables, for `ffn-lab diff` and `check`.
#include <cmath>
#include <string>
#include <vector>

#include "report/table.h"

namespace ffn::report {

// The one tolerance rule of ffn-lab, numpy's and PyTorch's allclose: a
// number agrees with its reference when |value - reference| <= atol + rtol *
// |reference|. The reference is the expected table for `check`, the second
// table for `diff`, the document's value for a verdict, and the second side
// of an identity. (The claims list's promises for numerical identities are
// a different statement, a magnitude: see identity_tolerance in
// experiments/support/run.h.)
struct Tolerance {
    double rtol = 0.0;
    double atol = 0.0;
};

inline bool within(double value, double reference, Tolerance tol) {
    return std::fabs(value - reference) <= tol.atol + tol.rtol * std::fabs(reference);
}

struct Difference {
    std::string where;  // "table 'counts' row 3 column 'ffn_weights'" or a structural note
    std::string a, b;   // the two values as text (empty for structural notes)
    // For a cell: its table, its row's name ("d=512, m=2048" or "3") and its
    // column, and the two cells; empty for a structural note.
    std::string table = {}, row = {}, column = {};
    Cell x = {}, y = {};
    bool is_cell() const { return !column.empty() && !(a.empty() && b.empty()); }
};

// Numbers by within() (b the reference; NaN equals only NaN, equal
// infinities agree); text and booleans must be equal; null equals only null.
// Volatile columns (timings) are never compared.
bool cells_agree(const Cell& a, const Cell& b, Tolerance tol);
std::vector<Difference> diff_tables(const std::vector<Table>& a, const std::vector<Table>& b,
                                    Tolerance tol);
std::string describe(const Difference& d);

// `ffn-lab diff`'s report, as `dvc metrics diff` lays one out. The summary
// line: "3 cells differ in 2 rows of 1 table (4 tables compared)", the
// structural notes counted, or that the inputs agree. Then a table per
// table with differing cells: row, column, A, B, b_minus_a and
// relative_change ((B - A) / |A|, the labels a terminal shows) where both
// are numbers, the values at their shortest round-trip form.
std::string difference_summary(const std::vector<Difference>& differences, std::size_t tables_compared);
std::vector<Table> difference_tables(const std::vector<Difference>& differences);

}  // namespace ffn::report
