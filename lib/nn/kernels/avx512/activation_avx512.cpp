// The smooth activations' loops (activation_loops.h) built with -mavx512f
// and -mfma, and -fno-trapping-math so that GCC turns their selects into
// masked blends: sixteen floats or eight doubles per instruction, the same
// bits as the ref build. The only fused multiply-adds are those the
// formulas write (fmadd); -ffp-contract=off keeps the compiler from adding
// any.
#include "nn/kernels/activation_kernels.h"
#include "nn/kernels/activation_loops.h"

namespace ffn::nn::kernels {

SmoothLoopsFamily avx512_smooth_loops() { return loops::this_build(); }

}  // namespace ffn::nn::kernels
