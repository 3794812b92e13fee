// The smooth activations' loops (activation_loops.h) built with -mavx2, and
// -fno-trapping-math so that GCC turns their selects into blends: four
// doubles per instruction, the same bits as the portable build. Not with
// -mfma: a fused multiply-add would round differently from the portable
// build's separate multiply and add. Called only when the gemm dispatch has
// chosen a family that implies AVX2 (activation.cpp).
#include "nn/activation_loops.h"

namespace ffn::nn::avx2 {

void smooth_forward(Activation a, std::span<float> v) { loops::smooth_forward(a, v); }
void smooth_forward(Activation a, std::span<double> v) { loops::smooth_forward(a, v); }
void smooth_forward_keeping_derivative(Activation a, std::span<float> v, float* d) {
    loops::smooth_forward_keeping_derivative(a, v, d);
}
void smooth_forward_keeping_derivative(Activation a, std::span<double> v, double* d) {
    loops::smooth_forward_keeping_derivative(a, v, d);
}
void smooth_backward(Activation a, std::span<const float> z, std::span<float> g) { loops::smooth_backward(a, z, g); }
void smooth_backward(Activation a, std::span<const double> z, std::span<double> g) { loops::smooth_backward(a, z, g); }

}  // namespace ffn::nn::avx2
