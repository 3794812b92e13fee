// analysis/kernels/grid_kernel.h built with -mavx512f: eight doubles per instruction.
#include "analysis/kernels/grid_kernel.h"

namespace ffn::analysis::kernels {

GridFamily avx512_grid() { return grid::this_build(); }

}  // namespace ffn::analysis::kernels
