// train/kernels/narrow_kernel.h built with -mavx2 (lib/CMakeLists.txt): the same lines and bits as the
// ref build, eight float lanes per instruction.
#include "train/kernels/narrow_kernel.h"

namespace ffn::train::kernels {

NarrowFamily avx2_narrow() { return narrow::this_build<8>(); }

}  // namespace ffn::train::kernels
