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
// Two engines compute the gradient. `gradient` takes a drawn batch through
// five gemm_batched products, one call each over all instances, so each
// instance gets the bits it gets alone and the same bits with any kernel
// family; the bias gradient is a sum over the batch in blocked_sum's fixed
// order. `fused_gradient`, for the small models (fits_fused), draws the
// batch itself and makes the whole step one pass over it, sixteen samples
// to a vector, in its own fixed order (train/kernels/toy_kernel.h). Which
// one a model takes depends on its shape alone. tests/train/test_toy_model.cpp
// checks both against finite differences of the loss, against each other
// to rounding, and a stack of instances against each alone.
//
// The inputs come from a counter-based generator, so that a vector draws
// sixteen at once and no draw waits for the one before: feature i of sample
// s in step t of a model whose stream key is K (core/rng.h's stream_key) is
// SplitMix64 (Steele, Lea and Flood 2014) started at K, read at position
// c = (t n + i) batch + s, the word w = mix64(K + (c + 1) gamma). Its top
// 24 bits (float) or 53 bits (double) give u in [0, 1); the feature is
// active when u < p, p = 1 - S rounded to T, with strength u / p, which is
// then uniform on [0, 1).
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "core/hash.h"
#include "gemm/gemm.h"
#include "train/optimizer.h"

namespace ffn::train::toy_model {

struct Shape {
    std::size_t n, m, batch;  // features, hidden dimensions, samples
    std::size_t instances = 1;
};

inline constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ull;  // SplitMix64's increment

// The word at position `counter` of the stream keyed `key`, and the input
// value it gives: the definition the vector draws must match.
inline std::uint64_t word(std::uint64_t key, std::uint64_t counter) { return mix64(key + (counter + 1) * kGamma); }
template <class T>
T uniform_of(std::uint64_t w) {
    if constexpr (sizeof(T) == 4) return static_cast<float>(static_cast<std::int32_t>(w >> 40)) * 0x1p-24f;
    else return static_cast<double>(static_cast<std::int64_t>(w >> 11)) * 0x1p-53;
}
template <class T>
T input_of(std::uint64_t w, T density) {
    const T u = uniform_of<T>(w);
    return u < density ? u / density : T(0);
}
inline std::uint64_t counter(std::uint64_t step, std::size_t i, std::size_t s, const Shape& shape) {
    return (step * shape.n + i) * shape.batch + s;
}

// One step's batch of one model: x[i * batch + s], feature-major.
struct Draw {
    std::uint64_t key = 0, step = 0;
    std::size_t n = 0, batch = 0;
    double density = 1;  // p = 1 - S
};
template <class T>
void draw_batch(const Draw& d, T* x);

// The fused step's arguments: every instance draws its batch of step
// `step` from its own key, and gets dL/dW and dL/db of train/toy_model.h's
// loss on it (the importance and density are the stack's).
template <class T>
struct FusedStep {
    Shape shape;
    std::uint64_t step = 0;
    const std::uint64_t* keys = nullptr;  // one per instance
    double density = 1;
    const double* importance = nullptr;   // n
    const T *W = nullptr, *b = nullptr;
    T *gW = nullptr, *gb = nullptr;
};
template <class T>
void fused_gradient(const FusedStep<T>& step);

// The fused pass keeps each weight's gradient as sixteen running sums in
// the first level cache: models up to this many weights take it.
inline constexpr std::size_t kFusedMaxWeights = 256;
inline bool fits_fused(const Shape& s) { return s.n * s.m <= kFusedMaxWeights; }

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

// L of one instance in double, for reporting and for the gradient's test:
//   h_kt = W_k0 x_0t, then h_kt + W_ki x_it for i = 1 .. n-1;
//   o_it = b_i, then o_it + W_ki h_kt for k = 0 .. m-1;
//   L = (((0 + q_00) + q_01) + ... + q_(n-1)(batch-1)) / (batch n), q_it = (I_i e) e,
//   e = max(o_it, 0) - x_it: one sum, feature by feature, sample by sample.
// Computed a block of samples at a time (their h in the first level cache;
// over all samples, rows of 10,000 doubles went through L2 once per
// feature), the terms q kept to be summed in that order at the end.
inline double loss(const Shape& s, const double* W, const double* b, const double* x, const double* importance) {
    constexpr std::size_t kBlock = 128;
    std::vector<double> h(s.m * kBlock), o(kBlock), q(s.n * s.batch);
    for (std::size_t t0 = 0; t0 < s.batch; t0 += kBlock) {
        const std::size_t c = std::min(kBlock, s.batch - t0);
        for (std::size_t k = 0; k < s.m; ++k)
            for (std::size_t t = 0; t < c; ++t) h[k * kBlock + t] = W[k * s.n] * x[t0 + t];
        for (std::size_t i = 1; i < s.n; ++i) {
            const double* xi = x + i * s.batch + t0;
            for (std::size_t k = 0; k < s.m; ++k) {
                const double w = W[k * s.n + i];
                double* hk = &h[k * kBlock];
                for (std::size_t t = 0; t < c; ++t) hk[t] = hk[t] + w * xi[t];
            }
        }
        for (std::size_t i = 0; i < s.n; ++i) {
            for (std::size_t t = 0; t < c; ++t) o[t] = b[i];
            for (std::size_t k = 0; k < s.m; ++k) {
                const double w = W[k * s.n + i];
                const double* hk = &h[k * kBlock];
                for (std::size_t t = 0; t < c; ++t) o[t] = o[t] + w * hk[t];
            }
            for (std::size_t t = 0; t < c; ++t) {
                const double e = std::max(o[t], 0.0) - x[i * s.batch + t0 + t];
                q[i * s.batch + t0 + t] = importance[i] * e * e;
            }
        }
    }
    double total = 0;
    for (const double term : q) total += term;
    return total / static_cast<double>(s.batch * s.n);
}

// Models of one shape, density and importance trained as one stack, each
// from its own initial W (b starts at 0) and with its own stream of
// batches: one step is the fused pass or the products, then the library's
// Adam over every instance's W and b. Not movable: the optimizer holds
// pointers into the weights.
template <class T>
class Stack {
public:
    Stack(const Shape& shape, std::vector<std::uint64_t> keys, std::vector<T> initial_W, double density,
          std::vector<double> importance, double lr);
    Stack(const Stack&) = delete;
    Stack& operator=(const Stack&) = delete;

    void step();
    std::uint64_t steps_taken() const { return step_; }
    // Instance r's weights.
    std::span<const T> W(std::size_t r) const { return {W_.data() + r * shape_.m * shape_.n, shape_.m * shape_.n}; }
    std::span<const T> b(std::size_t r) const { return {b_.data() + r * shape_.n, shape_.n}; }

private:
    Shape shape_;
    std::vector<std::uint64_t> keys_;
    double density_;
    std::vector<double> importance_;
    std::vector<T> W_, b_, gW_, gb_, x_;
    Optimizer<T> optimizer_;
    Workspace<T> work_;
    std::uint64_t step_ = 0;
};

}  // namespace ffn::train::toy_model
