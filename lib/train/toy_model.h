#pragma once
// Elhage et al.'s toy model of superposition, x' = ReLU(W^T W x + b): its
// loss and the loss's gradient, for `instances` models trained as one
// computation (the toy_superposition kind trains thousands this way). Per
// instance, the batch is stored feature-major (x[i * batch + s] is feature
// i of sample s) and W is m x n (W[k * n + i]: hidden dimension k, feature
// i); the instances follow each other in x, W and b. The loss, as in the
// paper's code, is the importance-weighted squared error averaged over
// samples and features:
//
//   L = 1/(batch n) sum_s sum_i I_i (ReLU(o_i) - x_i)^2,  o = W^T h + b,  h = W x.
//
// The five products go through gemm_batched, one call each over all
// instances, so each instance gets the bits it gets alone and the same bits
// with any kernel family. The bias gradient is a sum over the batch in
// blocked_sum's fixed order. tests/train/test_toy_model.cpp checks the
// gradient against finite differences of the loss, and a stack of
// instances against each alone.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "gemm/gemm.h"

namespace ffn::train::toy_model {

struct Shape {
    std::size_t n, m, batch;  // features, hidden dimensions, samples
    std::size_t instances = 1;
};

// `value` where `on`, else +0, by masking its bits: a ternary there
// compiles to a branch (a trapping-math compiler may not compute both arms),
// one the sparsity of the inputs makes unpredictable, and it cost up to
// half the training time.
template <class T>
T value_or_zero(bool on, T value) {
    using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
    return std::bit_cast<T>(static_cast<Bits>(std::bit_cast<Bits>(value) & (Bits{0} - static_cast<Bits>(on))));
}

// sum_s a[s], in a fixed order that vectorises: 16 running sums (sample s
// into sum s % 16), then halved pairwise.
template <class T>
T blocked_sum(const T* a, std::size_t n) {
    constexpr std::size_t K = 16;
    T acc[K] = {};
    std::size_t s = 0;
    for (; s + K <= n; s += K)
        for (std::size_t l = 0; l < K; ++l) acc[l] = acc[l] + a[s + l];
    for (std::size_t l = 0; s < n; ++s, ++l) acc[l] = acc[l] + a[s];
    for (std::size_t w = K / 2; w >= 1; w /= 2)
        for (std::size_t l = 0; l < w; ++l) acc[l] = acc[l] + acc[l + w];
    return acc[0];
}

template <class T>
struct Workspace {
    std::vector<T> h, dh, d;  // per instance m x batch, m x batch, n x batch
};

// dL/dW (m x n) and dL/db (n) of every instance: through the ReLU, d =
// dL/do; gb = sum_s d; gW = h d^T (W as the decoder) + (W d) x^T (W as the
// encoder). `importance` is shared by the instances.
template <class T>
void gradient(const Shape& s, const T* W, const T* b, const T* x, const double* importance, T* gW, T* gb, Workspace<T>& w) {
    using gemm::Trans;
    const auto I = static_cast<std::int64_t>(s.instances), n = static_cast<std::int64_t>(s.n),
               m = static_cast<std::int64_t>(s.m), B = static_cast<std::int64_t>(s.batch);
    w.h.resize(s.instances * s.m * s.batch);
    w.dh.resize(s.instances * s.m * s.batch);
    w.d.resize(s.instances * s.n * s.batch);
    const gemm::Strides weights_by_batch{.a = m * n, .b = n * B, .c = m * B};
    gemm::gemm_batched<T>(I, Trans::no, Trans::no, m, B, n, T(1), W, n, x, B, T(0), w.h.data(), B, weights_by_batch);  // h = W x
    gemm::gemm_batched<T>(I, Trans::yes, Trans::no, n, B, m, T(1), W, n, w.h.data(), B, T(0), w.d.data(), B,
                          {.a = m * n, .b = m * B, .c = n * B});  // W^T h
    const T scale = static_cast<T>(2.0 / static_cast<double>(s.batch * s.n));
    for (std::size_t r = 0; r < s.instances * s.n; ++r) {  // r: instance r / n, feature r % n
        T* dr = &w.d[r * s.batch];
        const T* xr = &x[r * s.batch];
        const T bias = b[r], weight = scale * static_cast<T>(importance[r % s.n]);
        for (std::size_t t = 0; t < s.batch; ++t) {
            const T o = dr[t] + bias;
            dr[t] = value_or_zero(o > 0, weight * (o - xr[t]));
        }
        gb[r] = blocked_sum<T>(dr, s.batch);
    }
    const gemm::Strides outer{.a = m * B, .b = n * B, .c = m * n};
    gemm::gemm_batched<T>(I, Trans::no, Trans::yes, m, n, B, T(1), w.h.data(), B, w.d.data(), B, T(0), gW, n, outer);  // h d^T
    gemm::gemm_batched<T>(I, Trans::no, Trans::no, m, B, n, T(1), W, n, w.d.data(), B, T(0), w.dh.data(), B,
                          weights_by_batch);                                                                 // W d
    gemm::gemm_batched<T>(I, Trans::no, Trans::yes, m, n, B, T(1), w.dh.data(), B, x, B, T(1), gW, n, outer);  // + (W d) x^T
}

// h = W x, m x batch, in double, for the reported loss.
inline void hidden(const Shape& s, const double* W, const double* x, double* h) {
    for (std::size_t k = 0; k < s.m; ++k) {
        double* hk = h + k * s.batch;
        for (std::size_t t = 0; t < s.batch; ++t) hk[t] = W[k * s.n] * x[t];
        for (std::size_t i = 1; i < s.n; ++i)
            for (std::size_t t = 0; t < s.batch; ++t) hk[t] = hk[t] + W[k * s.n + i] * x[i * s.batch + t];
    }
}

// o_i = b_i + sum_k W[k][i] h_k for feature i, into out (batch values).
inline void preactivation(const Shape& s, const double* W, const double* b, const double* h, std::size_t i, double* out) {
    for (std::size_t t = 0; t < s.batch; ++t) out[t] = b[i];
    for (std::size_t k = 0; k < s.m; ++k)
        for (std::size_t t = 0; t < s.batch; ++t) out[t] = out[t] + W[k * s.n + i] * h[k * s.batch + t];
}

// L of one instance in double, for reporting and for the gradient's test.
inline double loss(const Shape& s, const double* W, const double* b, const double* x, const double* importance) {
    std::vector<double> h(s.m * s.batch), o(s.batch);
    hidden(s, W, x, h.data());
    double total = 0;
    for (std::size_t i = 0; i < s.n; ++i) {
        preactivation(s, W, b, h.data(), i, o.data());
        for (std::size_t t = 0; t < s.batch; ++t) {
            const double e = std::max(o[t], 0.0) - x[i * s.batch + t];
            total += importance[i] * e * e;
        }
    }
    return total / static_cast<double>(s.batch * s.n);
}

}  // namespace ffn::train::toy_model
