// train/kernels/toy_kernel.h built with -mavx512f -mavx512dq (lib/CMakeLists.txt): the same lines and bits as the ref build, the sixty-four-bit multiplies of the draws as one instruction.
#include "train/kernels/toy_kernel.h"

namespace ffn::train::kernels {

ToyFamily avx512_toy() { return toy::this_build(); }

}  // namespace ffn::train::kernels
