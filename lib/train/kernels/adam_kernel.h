#pragma once
// Adam's update of one range of a tensor, PyTorch's formulas with its
// fused multiply-adds written out: per element, with g the gradient (plus
// wd p for Adam's L2 term; p scaled by 1 - lr wd first for AdamW),
//   m = fma(beta1, m, (1 - beta1) g)
//   v = fma(beta2, v, ((1 - beta2) g) g)
//   p = fma(-step_size, m / (sqrt(v) / bias_correction2_sqrt + eps), p)
// with moments below the least normal number stored as zero. Included by
// kernels/<isa>/adam_<isa>.cpp, one build per family; every build gives the
// same bits (fma is correctly rounded; sqrt and division round alike in
// vector and scalar code).
//
// Internal linkage on purpose, as in narrow_kernel.h.
#include <cmath>
#include <cstddef>
#include <limits>

#include "core/kernels/math_kernels.h"
#include "train/kernels/adam_kernels.h"

namespace ffn::train {
namespace {
namespace adam {

using math::kernels::fmadd;

template <int DecayForm, class T>
void update(const AdamStep<T>& s, std::size_t begin, std::size_t end, T* __restrict p, const T* __restrict grad,
            T* __restrict m, T* __restrict v) {
    const T tiny = std::numeric_limits<T>::min();
    for (std::size_t i = begin; i < end; ++i) {
        T g = grad[i];
        if constexpr (DecayForm == 1) p[i] = p[i] * s.decay;          // AdamW
        if constexpr (DecayForm == 2) g = fmadd(s.weight_decay, p[i], g);  // Adam's L2 term
        const T mi = fmadd(s.beta1, m[i], s.one_minus_beta1 * g);
        const T vi = fmadd(s.beta2, v[i], (s.one_minus_beta2 * g) * g);
        m[i] = std::fabs(mi) < tiny ? T(0) : mi;
        v[i] = std::fabs(vi) < tiny ? T(0) : vi;
        const T denom = std::sqrt(v[i]) / s.bias_correction2_sqrt + s.eps;
        p[i] = fmadd(-s.step_size, m[i] / denom, p[i]);
    }
}

template <class T>
void run(const AdamStep<T>& s, std::size_t begin, std::size_t end, T* p, const T* grad, T* m, T* v) {
    // One loop per weight-decay form, with no branch inside, so that it
    // vectorises.
    switch (s.decay_form) {
        case 0: return update<0>(s, begin, end, p, grad, m, v);
        case 1: return update<1>(s, begin, end, p, grad, m, v);
        default: return update<2>(s, begin, end, p, grad, m, v);
    }
}

inline kernels::AdamFamily this_build() { return {run<float>, run<double>}; }

}  // namespace adam
}  // namespace
}  // namespace ffn::train
