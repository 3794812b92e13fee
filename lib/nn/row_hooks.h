#pragma once
// The gemm-epilogue hooks of a layer that keeps act'(z) from its forward
// pass (nn::RowHook): shared by MLP and BatchedMLP. Indices are i * columns
// + j0 + k into matrices of the output's shape (for BatchedMLP, the stack of
// the instances' outputs, whose rows gemm_batched numbers across the stack).
#include <cstdint>
#include <span>

#include "nn/activation.h"

namespace ffn::nn::hooks {

template <class T>
struct KeptDerivative {
    Activation activation;
    T* derivative;
    std::int64_t columns;
};

// z -> act(z) in place, act'(z) into the kept matrix.
template <class T>
void activate_rows(T* z, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const KeptDerivative<T>*>(p);
    const auto length = static_cast<std::size_t>(n);
    activate_keeping_derivative<T>(c->activation, std::span<T>(z, length),
                                   std::span<T>(c->derivative + i * c->columns + j0, length));
}

// dL/dh -> dL/dz = dL/dh * act'(z), with the kept act'(z).
template <class T>
void times_derivative_rows(T* g, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const KeptDerivative<T>*>(p);
    const T* __restrict d = c->derivative + i * c->columns + j0;
    for (std::int64_t k = 0; k < n; ++k) g[k] = g[k] * d[k];
}

}  // namespace ffn::nn::hooks
