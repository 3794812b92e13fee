// train/narrow_kernel.h built with -mavx2 (lib/CMakeLists.txt): the same
// lines and bits as narrow_fit.cpp's build, eight float lanes per
// instruction.
#include "train/narrow_kernel.h"

namespace ffn::train::avx2 {

void narrow_pass(const NarrowPass<float>& pass) { narrow::run_pass<8>(pass); }
void narrow_pass(const NarrowPass<double>& pass) { narrow::run_pass<8>(pass); }

}  // namespace ffn::train::avx2
