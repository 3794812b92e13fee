// train/kernels/toy_kernel.h built for any x86-64 (no ISA flags): the reference the other builds must match bit for bit.
#include "train/kernels/toy_kernel.h"

namespace ffn::train::kernels {

ToyFamily ref_toy() { return toy::this_build(); }

}  // namespace ffn::train::kernels
