// train/kernels/toy_kernel.h built with -mavx2 -mfma (lib/CMakeLists.txt): the same lines and bits as the ref build.
#include "train/kernels/toy_kernel.h"

namespace ffn::train::kernels {

ToyFamily avx2_toy() { return toy::this_build(); }

}  // namespace ffn::train::kernels
