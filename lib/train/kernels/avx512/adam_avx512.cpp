// train/kernels/adam_kernel.h built with -mavx512f: sixteen floats per vfmadd.
#include "train/kernels/adam_kernel.h"

namespace ffn::train::kernels {

AdamFamily avx512_adam() { return adam::this_build(); }

}  // namespace ffn::train::kernels
