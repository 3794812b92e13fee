#pragma once
// The smooth activations' array loops (activation_loops.h), one build per
// family of core/isa.h: kernels/ref/ for any x86-64, kernels/avx2/ with
// -mavx2, kernels/avx512/ with -mavx512f (on a machine with full-width
// AVX-512 units it took planted_features' GELU nets from 11.7 to 10.3 s).
// Every build gives the same bits.
#include <span>

#include "core/isa.h"
#include "nn/activation.h"

namespace ffn::nn::kernels {

template <class T>
struct SmoothLoops {
    void (*forward)(Activation, std::span<T>);
    void (*forward_keeping_derivative)(Activation, std::span<T>, T*);
    void (*backward)(Activation, std::span<const T>, std::span<T>);
};

struct SmoothLoopsFamily {
    SmoothLoops<float> f32;
    SmoothLoops<double> f64;
};

SmoothLoopsFamily ref_smooth_loops();
SmoothLoopsFamily avx2_smooth_loops();
SmoothLoopsFamily avx512_smooth_loops();

// The registry's entry for these loops, and the active family's.
const PerIsa<SmoothLoopsFamily>& smooth_loops();
template <class T>
const SmoothLoops<T>& smooth_loops_of(Isa isa) {
    if constexpr (sizeof(T) == 4) return smooth_loops()[isa].f32;
    else return smooth_loops()[isa].f64;
}

}  // namespace ffn::nn::kernels
