#pragma once
// The dense-grid loops of analysis/kinks.h (grid_kernel.h), one build per
// family of core/isa.h.
#include <cstddef>

namespace ffn::analysis::kernels {

struct GridFamily {
    void (*relu_net)(const double* w, const double* b, const double* v, std::size_t m, double c, double lo, double dx,
                     std::size_t points, double* y);
    int (*slope_changes)(const double* y, std::size_t points, double dx, double tolerance);
};

GridFamily ref_grid();
GridFamily avx2_grid();
GridFamily avx512_grid();

}  // namespace ffn::analysis::kernels
