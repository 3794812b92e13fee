// analysis/kernels/grid_kernel.h built for any x86-64.
#include "analysis/kernels/grid_kernel.h"

namespace ffn::analysis::kernels {

GridFamily ref_grid() { return grid::this_build(); }

}  // namespace ffn::analysis::kernels
