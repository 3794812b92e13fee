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
};

// Numbers by within() (b the reference; NaN equals only NaN, equal
// infinities agree); text and booleans must be equal; null equals only null.
// Volatile columns (timings) are never compared.
bool cells_agree(const Cell& a, const Cell& b, Tolerance tol);
std::vector<Difference> diff_tables(const std::vector<Table>& a, const std::vector<Table>& b,
                                    Tolerance tol);
std::string describe(const Difference& d);

}  // namespace ffn::report
