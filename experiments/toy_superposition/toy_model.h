#pragma once
// The toy model of superposition, x' = ReLU(W^T W x + b), its loss and the
// loss's gradient, on a batch stored feature-major (x[i * batch + s] is
// feature i of sample s). W is m x n (W[k * n + i]: hidden dimension k,
// feature i). The loss, as in Elhage et al.'s code, is the importance-
// weighted squared error averaged over samples and features:
//
//   L = 1/(batch n) sum_s sum_i I_i (ReLU(o_i) - x_i)^2,  o = W^T h + b,  h = W x.
//
// Every loop runs over the batch innermost (so it vectorises), and every
// sum over the batch goes through blocked_sum, so the bits are the same
// with any ISA. tests/experiments/test_toy_superposition.cpp checks the
// gradient against finite differences of the loss.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace ffn::experiments::toy_superposition {

struct Shape {
    std::size_t n, m, batch;  // features, hidden dimensions, samples
};

// sum_s a[s] b[s], or sum_s a[s] when b is null, in a fixed order that
// vectorises: 16 running sums (sample s into sum s % 16), then halved
// pairwise.
template <class T>
T blocked_sum(const T* a, const T* b, std::size_t n) {
    constexpr std::size_t K = 16;
    T acc[K] = {};
    std::size_t s = 0;
    for (; s + K <= n; s += K)
        for (std::size_t l = 0; l < K; ++l) acc[l] = acc[l] + (b ? a[s + l] * b[s + l] : a[s + l]);
    for (std::size_t l = 0; s < n; ++s, ++l) acc[l] = acc[l] + (b ? a[s] * b[s] : a[s]);
    for (std::size_t w = K / 2; w >= 1; w /= 2)
        for (std::size_t l = 0; l < w; ++l) acc[l] = acc[l] + acc[l + w];
    return acc[0];
}

template <class T>
struct Workspace {
    std::vector<T> h, dh, d;  // m x batch, m x batch, n x batch
};

// h = W x, m x batch.
template <class T>
void hidden(const Shape& s, const T* W, const T* x, T* h) {
    for (std::size_t k = 0; k < s.m; ++k) {
        T* hk = h + k * s.batch;
        for (std::size_t t = 0; t < s.batch; ++t) hk[t] = W[k * s.n] * x[t];
        for (std::size_t i = 1; i < s.n; ++i)
            for (std::size_t t = 0; t < s.batch; ++t) hk[t] = hk[t] + W[k * s.n + i] * x[i * s.batch + t];
    }
}

// o_i = b_i + sum_k W[k][i] h_k for feature i, into out (batch values).
template <class T>
void preactivation(const Shape& s, const T* W, const T* b, const T* h, std::size_t i, T* out) {
    for (std::size_t t = 0; t < s.batch; ++t) out[t] = b[i];
    for (std::size_t k = 0; k < s.m; ++k)
        for (std::size_t t = 0; t < s.batch; ++t) out[t] = out[t] + W[k * s.n + i] * h[k * s.batch + t];
}

// dL/dW (m x n) and dL/db (n): through the ReLU, d = dL/do; gb = sum_s d;
// gW = h d^T (W as the decoder) + (W d) x^T (W as the encoder).
template <class T>
void gradient(const Shape& s, const T* W, const T* b, const T* x, const double* importance, T* gW, T* gb, Workspace<T>& w) {
    w.h.resize(s.m * s.batch);
    w.dh.resize(s.m * s.batch);
    w.d.resize(s.n * s.batch);
    hidden(s, W, x, w.h.data());
    const T scale = static_cast<T>(2.0 / static_cast<double>(s.batch * s.n));
    for (std::size_t i = 0; i < s.n; ++i) {
        T* di = &w.d[i * s.batch];
        preactivation(s, W, b, w.h.data(), i, di);
        const T weight = scale * static_cast<T>(importance[i]);
        for (std::size_t t = 0; t < s.batch; ++t) di[t] = di[t] > 0 ? weight * (di[t] - x[i * s.batch + t]) : T(0);
        gb[i] = blocked_sum<T>(di, nullptr, s.batch);
    }
    hidden(s, W, w.d.data(), w.dh.data());  // W d: the same product as W x
    for (std::size_t k = 0; k < s.m; ++k)
        for (std::size_t i = 0; i < s.n; ++i)
            gW[k * s.n + i] = blocked_sum(&w.h[k * s.batch], &w.d[i * s.batch], s.batch) +
                              blocked_sum(&w.dh[k * s.batch], &x[i * s.batch], s.batch);
}

// L in double, for reporting and for the gradient's test.
template <class T>
double loss(const Shape& s, const T* W, const T* b, const T* x, const double* importance) {
    std::vector<T> h(s.m * s.batch), o(s.batch);
    hidden(s, W, x, h.data());
    double total = 0;
    for (std::size_t i = 0; i < s.n; ++i) {
        preactivation(s, W, b, h.data(), i, o.data());
        for (std::size_t t = 0; t < s.batch; ++t) {
            const double e = std::max(static_cast<double>(o[t]), 0.0) - static_cast<double>(x[i * s.batch + t]);
            total += importance[i] * e * e;
        }
    }
    return total / static_cast<double>(s.batch * s.n);
}

}  // namespace ffn::experiments::toy_superposition
