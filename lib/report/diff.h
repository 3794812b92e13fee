#pragma once
// Cell-by-cell comparison of result tables, for `ffn-lab diff` and `check`.
#include <string>
#include <vector>

#include "report/table.h"

namespace ffn::report {

// Two numbers agree when |a - b| <= atol + rtol * max(|a|, |b|); text and
// booleans must be equal; null equals only null. Volatile columns (timings)
// are never compared.
struct Tolerance {
    double rtol = 0.0;
    double atol = 0.0;
};

struct Difference {
    std::string where;  // "table 'counts' row 3 column 'ffn_weights'" or a structural note
    std::string a, b;   // the two values as text (empty for structural notes)
};

bool cells_agree(const Cell& a, const Cell& b, Tolerance tol);
std::vector<Difference> diff_tables(const std::vector<Table>& a, const std::vector<Table>& b,
                                    Tolerance tol);
std::string describe(const Difference& d);

}  // namespace ffn::report
