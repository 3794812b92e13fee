#pragma once
// The vectorised loops of analysis, one build per family of core/isa.h:
// the dense-grid loops of analysis/kinks.h (grid_kernel.h) and the group
// sums of the unit contrasts of analysis/units.h (group_sums_kernel.h).
#include <cstddef>
#include <cstdint>

namespace ffn::analysis::kernels {

struct GridFamily {
    void (*relu_net)(const double* w, const double* b, const double* v, std::size_t m, double c, double lo, double dx,
                     std::size_t points, double* y);
    int (*slope_changes)(const double* y, std::size_t points, double dx, double tolerance);
    // Over the `count` rows listed in `rows` (in that order) of kGroupBlock
    // columns (row stride ld): each column's sum and sum of squares, added
    // as the scalar loop adds them.
    void (*group_sums)(const double* h, std::size_t ld, const std::uint32_t* rows, std::size_t count, double* sum, double* sq);
    // The same of float values, widened exactly: the bits of group_sums on them.
    void (*group_sums_f32)(const float* h, std::size_t ld, const std::uint32_t* rows, std::size_t count, double* sum, double* sq);
};

inline constexpr std::size_t kGroupBlock = 8;

GridFamily ref_grid();
GridFamily avx2_grid();
GridFamily avx512_grid();

}  // namespace ffn::analysis::kernels
