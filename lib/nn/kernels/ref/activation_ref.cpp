// The smooth activations' loops (activation_loops.h) for any x86-64, with
// -fno-trapping-math so that their selects vectorise as the avx2 build's
// do: the reference the other builds must match bit for bit.
#include "nn/kernels/activation_kernels.h"
#include "nn/kernels/activation_loops.h"

namespace ffn::nn::kernels {

SmoothLoopsFamily ref_smooth_loops() { return loops::this_build(); }

}  // namespace ffn::nn::kernels
