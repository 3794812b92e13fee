#pragma once
// The vectorised loops of analysis, one build per family of core/isa.h:
// the dense-grid loops of analysis/kinks.h (grid_kernel.h) and the group
// sums of the unit contrasts of analysis/units.h (group_sums_kernel.h).
#include <cstddef>

namespace ffn::analysis::kernels {

struct GridFamily {
    void (*relu_net)(const double* w, const double* b, const double* v, std::size_t m, double c, double lo, double dx,
                     std::size_t points, double* y);
    int (*slope_changes)(const double* y, std::size_t points, double dx, double tolerance);
    // Over `rows` rows of kGroupBlock columns (row stride ld), rows in
    // order: the sums and sums of squares of the rows labelled non-zero (a)
    // and zero (b), each column's as the scalar loop adds them.
    void (*group_sums)(const double* h, std::size_t rows, std::size_t ld, const char* label, double* sum_a, double* sum_b,
                       double* sq_a, double* sq_b);
};

inline constexpr std::size_t kGroupBlock = 16;

GridFamily ref_grid();
GridFamily avx2_grid();
GridFamily avx512_grid();

}  // namespace ffn::analysis::kernels
