// analysis/kernels/grid_kernel.h built with -mavx2: four doubles per instruction.
#include "analysis/kernels/grid_kernel.h"

namespace ffn::analysis::kernels {

GridFamily avx2_grid() { return grid::this_build(); }

}  // namespace ffn::analysis::kernels
