// The smooth activations' loops (activation_loops.h) built with -mavx2, and
// -fno-trapping-math so that GCC turns their selects into blends: eight
// floats or four doubles per instruction, the same bits as the ref build.
// Not with -mfma: a fused multiply-add the compiler picks would round
// differently from the ref build's separate multiply and add.
#include "nn/kernels/activation_kernels.h"
#include "nn/kernels/activation_loops.h"

namespace ffn::nn::kernels {

SmoothLoopsFamily avx2_smooth_loops() { return loops::this_build(); }

}  // namespace ffn::nn::kernels
