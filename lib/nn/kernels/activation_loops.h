#pragma once
// The smooth activations and their derivatives, and the loops that apply
// them to arrays. Included by kernels/ref/activation_ref.cpp (built for any
// x86-64), kernels/avx2/activation_avx2.cpp and kernels/avx512/
// activation_avx512.cpp (the same lines built with -mavx2, -mavx512f): the
// loops vectorise, and every lane computes what the scalar formula
// computes, so the three builds give the same bits. Each formula runs in T (float or
// double) with ffn::math's kernels (no C library): float32 activations
// are float arithmetic, 8 to an AVX2 register, as in every framework.
//
// Internal linkage on purpose, as in gemm/kernels/tile_kernel.h: the two
// builds of these inline functions must not be merged by the linker.
#include <cstddef>
#include <cstring>
#include <span>

#include "core/kernels/math_kernels.h"
#include "nn/activation.h"
#include "nn/kernels/activation_kernels.h"

namespace ffn::nn {
namespace {
namespace loops {

namespace mk = math::kernels;
template <class T>
using S = mk::Scalar<T>;  // T is a scalar, or a vector of them (train/kernels/narrow_kernel.h)

// sqrt(2/pi) and the cubic coefficient of GELU's tanh approximation
// (Hendrycks and Gimpel 2016), as PyTorch's approximate="tanh".
constexpr double kGeluTanhScale = 0.7978845608028654;
constexpr double kGeluTanhCubic = 0.044715;
constexpr double kInvSqrt2 = 0.7071067811865476;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi), the normal density at 0

// Each formula gives its value, its derivative, and both at once (for a
// layer that keeps the derivative for its backward pass): the shared exp,
// erfc or tanh is computed once, and each result has the bits of its
// one-at-a-time formula.
template <class T>
struct ValueAndDerivative {
    T value;
    T derivative;
};

struct Tanh {
    template <class T>
    static T value(T x) { return mk::tanh(x); }
    template <class T>
    static T derivative(T x) { return both(x).derivative; }
    template <class T>
    static ValueAndDerivative<T> both(T x) {
        const T t = mk::tanh(x);
        return {t, 1 - t * t};
    }
};

// x Phi(x) with Phi(x) = erfc(-x/sqrt 2) / 2: for negative x, the usual
// 1 + erf(x/sqrt 2) cancels to a few digits; erfc keeps them.
struct Gelu {
    template <class T>
    static T value(T x) { return S<T>(0.5) * x * mk::erfc(-x * S<T>(kInvSqrt2)); }
    template <class T>
    static T derivative(T x) { return both(x).derivative; }
    template <class T>
    static ValueAndDerivative<T> both(T x) {
        const auto [erfc, gaussian] = mk::erfc_and_gaussian(-x * S<T>(kInvSqrt2));  // gaussian = exp(-x^2/2)
        return {S<T>(0.5) * x * erfc, S<T>(0.5) * erfc + x * gaussian * S<T>(kInvSqrt2Pi)};
    }
};

struct GeluTanh {
    template <class T>
    static T value(T x) {
        return S<T>(0.5) * x * (1 + mk::tanh(S<T>(kGeluTanhScale) * (x + S<T>(kGeluTanhCubic) * x * x * x)));
    }
    template <class T>
    static T derivative(T x) { return both(x).derivative; }
    template <class T>
    static ValueAndDerivative<T> both(T x) {
        const T t = mk::tanh(S<T>(kGeluTanhScale) * (x + S<T>(kGeluTanhCubic) * x * x * x));
        const T d_inner = S<T>(kGeluTanhScale) * (1 + 3 * S<T>(kGeluTanhCubic) * x * x);
        // Where tanh has rounded to +-1 the second term is 0, also when x^2
        // has overflowed (float beyond 1e19), which would make it inf * 0.
        const T sech2 = 1 - t * t;
        return {S<T>(0.5) * x * (1 + t), S<T>(0.5) * (1 + t) + (sech2 == 0 ? S<T>(0) : S<T>(0.5) * x * sech2 * d_inner)};
    }
};

struct Silu {
    template <class T>
    static T value(T x) { return x * mk::sigmoid(x); }
    template <class T>
    static T derivative(T x) { return both(x).derivative; }
    template <class T>
    static ValueAndDerivative<T> both(T x) {
        const T s = mk::sigmoid(x);
        return {x * s, s * (1 + x * (1 - s))};
    }
};

struct Sigmoid {
    template <class T>
    static T value(T x) { return mk::sigmoid(x); }
    template <class T>
    static T derivative(T x) { return both(x).derivative; }
    template <class T>
    static ValueAndDerivative<T> both(T x) {
        const T s = mk::sigmoid(x);
        return {s, s * (1 - s)};
    }
};

// The loops take one register of the build at a time as a GCC vector (a
// zmm, a ymm, an xmm), whose lanes run the scalar formula's operations,
// and the tail one element at a time: the compiler did not vectorise the
// formulas' selects and table reads by itself, and left them scalar.
#if defined(__AVX512F__)
constexpr std::size_t kBlockBytes = 64;
#elif defined(__AVX2__)
constexpr std::size_t kBlockBytes = 32;
#else
constexpr std::size_t kBlockBytes = 16;
#endif
template <class T>
struct BlockOf {
    typedef T type __attribute__((vector_size(kBlockBytes)));
};
template <class T>
using Block = typename BlockOf<T>::type;
template <class T>
constexpr std::size_t kBlock = kBlockBytes / sizeof(T);

template <class T>
Block<T> load_block(const T* p) {
    Block<T> v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T>
void store_block(T* p, const Block<T>& v) {
    std::memcpy(p, &v, sizeof v);
}

template <class F, class T>
void forward(std::span<T> values) {
    T* v = values.data();
    std::size_t i = 0;
    for (; i + kBlock<T> <= values.size(); i += kBlock<T>) store_block(v + i, F::value(load_block(v + i)));
    for (; i < values.size(); ++i) v[i] = F::value(v[i]);
}

template <class F, class T>
void backward(std::span<const T> z, std::span<T> grad) {
    const T* __restrict zz = z.data();
    T* __restrict g = grad.data();
    std::size_t i = 0;
    for (; i + kBlock<T> <= grad.size(); i += kBlock<T>)
        store_block(g + i, load_block(g + i) * F::derivative(load_block(zz + i)));
    for (; i < grad.size(); ++i) g[i] = g[i] * F::derivative(zz[i]);
}

template <class F, class T>
void forward_keeping_derivative(std::span<T> values, T* __restrict derivative) {
    T* v = values.data();
    std::size_t i = 0;
    for (; i + kBlock<T> <= values.size(); i += kBlock<T>) {
        const auto both = F::both(load_block(v + i));
        store_block(v + i, both.value);
        store_block(derivative + i, both.derivative);
    }
    for (; i < values.size(); ++i) {
        const auto both = F::both(v[i]);
        v[i] = both.value;
        derivative[i] = both.derivative;
    }
}

// The switch over activations, outside the loops. Relu and identity are not
// smooth and never come here.
template <class Visit>
void with_formula(Activation a, Visit visit) {
    switch (a) {
        case Activation::tanh: visit(Tanh{}); return;
        case Activation::gelu: visit(Gelu{}); return;
        case Activation::gelu_tanh: visit(GeluTanh{}); return;
        case Activation::silu: visit(Silu{}); return;
        case Activation::sigmoid: visit(Sigmoid{}); return;
        case Activation::relu:
        case Activation::identity: return;
    }
}

template <class T>
void smooth_forward(Activation a, std::span<T> values) {
    with_formula(a, [&](auto f) { forward<decltype(f)>(values); });
}

template <class T>
void smooth_forward_keeping_derivative(Activation a, std::span<T> values, T* derivative) {
    with_formula(a, [&](auto f) { forward_keeping_derivative<decltype(f)>(values, derivative); });
}

template <class T>
void smooth_backward(Activation a, std::span<const T> z, std::span<T> grad) {
    with_formula(a, [&](auto f) { backward<decltype(f)>(z, grad); });
}

// This build's loops, for the registry (activation_kernels.h).
inline kernels::SmoothLoopsFamily this_build() {
    return {{smooth_forward<float>, smooth_forward_keeping_derivative<float>, smooth_backward<float>},
            {smooth_forward<double>, smooth_forward_keeping_derivative<double>, smooth_backward<double>}};
}

}  // namespace loops
}  // namespace
}  // namespace ffn::nn
