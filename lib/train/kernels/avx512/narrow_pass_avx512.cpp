// train/kernels/narrow_kernel.h built with -mavx512f (lib/CMakeLists.txt): the same lines and bits as
// the ref build, sixteen instances to a block, so a float block fills one
// zmm register.
#include "train/kernels/narrow_kernel.h"

namespace ffn::train::kernels {

NarrowFamily avx512_narrow() { return narrow::this_build<16>(); }

}  // namespace ffn::train::kernels
