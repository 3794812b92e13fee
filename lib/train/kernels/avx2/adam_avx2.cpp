// train/kernels/adam_kernel.h built with -mavx2 -mfma: eight floats per vfmadd.
#include "train/kernels/adam_kernel.h"

namespace ffn::train::kernels {

AdamFamily avx2_adam() { return adam::this_build(); }

}  // namespace ffn::train::kernels
