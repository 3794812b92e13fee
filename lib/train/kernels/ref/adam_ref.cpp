// train/kernels/adam_kernel.h built for any x86-64 (the C library's fma per element): the
// reference the other builds match bit for bit.
#include "train/kernels/adam_kernel.h"

namespace ffn::train::kernels {

AdamFamily ref_adam() { return adam::this_build(); }

}  // namespace ffn::train::kernels
