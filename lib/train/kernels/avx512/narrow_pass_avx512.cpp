// train/narrow_kernel.h built with -mavx512f (lib/CMakeLists.txt): the
// same lines and bits as narrow_fit.cpp's build, sixteen instances to a
// block, so a float block fills one zmm register.
#include "train/narrow_kernel.h"

namespace ffn::train::avx512 {

void narrow_pass(const NarrowPass<float>& pass) { narrow::run_pass<16>(pass); }
void narrow_pass(const NarrowPass<double>& pass) { narrow::run_pass<16>(pass); }

}  // namespace ffn::train::avx512
