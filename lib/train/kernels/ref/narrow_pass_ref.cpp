// train/kernels/narrow_kernel.h built for any x86-64 (no ISA flags), eight instances to a block: the
// reference the other builds must match bit for bit.
#include "train/kernels/narrow_kernel.h"

namespace ffn::train::kernels {

NarrowFamily ref_narrow() { return narrow::this_build<8>(); }

}  // namespace ffn::train::kernels
