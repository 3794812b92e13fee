#pragma once
// The toy models' inputs and their fused step (train/toy_model.h), sixteen
// samples to a vector. Included by kernels/ref/toy_step_ref.cpp (any
// x86-64), kernels/avx2/toy_step_avx2.cpp and kernels/avx512/toy_step_avx512.cpp:
// a vector here is sixteen lanes in every build (GCC's vector extension:
// one zmm register, two ymm or four xmm), and every lane runs the same
// operations in the same order, so every build gives the same bits.
//
// The fused step's order, for one model and sixteen samples at a time
// (sample s in lane s % 16, the batch's last group padded with lanes that
// add nothing):
//   x_i  = the draws of train/toy_model.h, i = 0 .. n-1
//   h_k  = W_k0 x_0, then h_k = fma(W_ki, x_i, h_k) for i = 1 .. n-1
//   o_i  = b_i, then o_i = fma(W_ki, h_k, o_i) for k = 0 .. m-1
//   d_i  = o_i > 0 ? w_i (o_i - x_i) : 0,   w_i = (2 / (batch n)) I_i
//   e_k  = W_k0 d_0, then e_k = fma(W_ki, d_i, e_k) for i = 1 .. n-1
//   gb_i += d_i;  gW_ki = fma(h_k, d_i, gW_ki), then fma(e_k, x_i, gW_ki)
// each sum running per lane, and the sixteen lanes summed at the end by
// halving (lane l plus lane l + 8, then l + 4, ...), as toy_model.h's
// blocked_sum sums.
//
// Internal linkage on purpose, as in train/kernels/narrow_kernel.h: the
// three builds of these inline functions must not be merged by the linker.
#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

// GCC and clang warn that a vector argument's ABI depends on -mavx: these
// functions have internal linkage and never cross a build's boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "core/kernels/math_kernels.h"
#include "train/kernels/toy_kernels.h"

namespace ffn::train {
namespace {
namespace toy {

constexpr std::size_t L = 16;  // samples to a vector, in every build

template <class T>
struct VectorOf {
    typedef T type __attribute__((vector_size(L * sizeof(T))));
};
template <class T>
using Vec = typename VectorOf<T>::type;
using Words = Vec<std::uint64_t>;
template <class T>
using Mask = Vec<std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>>;  // all ones or zero, lane by lane

using math::kernels::fmadd;

template <class T>
Vec<T> all(T value) {
    return Vec<T>{} + value;
}

template <class T>
Vec<T> where(Mask<T> on, Vec<T> value) {  // value where on, else +0: bits, not a branch
    return std::bit_cast<Vec<T>>(std::bit_cast<Mask<T>>(value) & on);
}

// core/hash.h's mix64, lane by lane.
inline Words mix(Words z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

// Lane l: l gamma, the distance of its position from lane 0's.
inline Words lane_offsets() {
    Words w{};
    for (std::size_t l = 0; l < L; ++l) w[l] = l * toy_model::kGamma;
    return w;
}

template <class T>
Mask<T> lanes_below(std::size_t valid) {
    Mask<T> index{};
    for (std::size_t l = 0; l < L; ++l) index[l] = static_cast<std::remove_cvref_t<decltype(index[0])>>(l);
    return index < static_cast<std::remove_cvref_t<decltype(index[0])>>(valid);
}

// Positions counter .. counter + 15 of the stream keyed `key`, as inputs
// (toy_model::input_of, lane by lane).
template <class T>
Vec<T> inputs(std::uint64_t key, std::uint64_t counter, Vec<T> density, Words offsets) {
    const Words w = mix(Words{} + (key + (counter + 1) * toy_model::kGamma) + offsets);
    Vec<T> u;
    if constexpr (sizeof(T) == 4)
        u = __builtin_convertvector(__builtin_convertvector(w >> 40, Vec<std::int32_t>), Vec<float>) * 0x1p-24f;
    else
        u = __builtin_convertvector(__builtin_convertvector(w >> 11, Vec<std::int64_t>), Vec<double>) * 0x1p-53;
    return where<T>(u < density, u / density);
}

template <class T>
T halving_sum(Vec<T> v) {
    for (std::size_t w = L / 2; w >= 1; w /= 2)
        for (std::size_t l = 0; l < w; ++l) v[l] = v[l] + v[l + w];
    return v[0];
}

template <class T>
void draw_batch(const toy_model::Draw& d, T* x) {
    const Words offsets = lane_offsets();
    const Vec<T> density = all(static_cast<T>(d.density));
    const toy_model::Shape shape{d.n, 0, d.batch};
    for (std::size_t i = 0; i < d.n; ++i)
        for (std::size_t s = 0; s < d.batch; s += L) {
            const Vec<T> v = inputs<T>(d.key, toy_model::counter(d.step, i, s, shape), density, offsets);
            std::memcpy(x + i * d.batch + s, &v, std::min(L, d.batch - s) * sizeof(T));
        }
}

template <class T>
void fused_gradient(const toy_model::FusedStep<T>& a) {
    const std::size_t n = a.shape.n, m = a.shape.m, B = a.shape.batch;
    const Words offsets = lane_offsets();
    const Vec<T> density = all(static_cast<T>(a.density));
    const T scale = static_cast<T>(2.0 / static_cast<double>(B * n));
    std::vector<Vec<T>> weight(n), x(n), d(n), h(m), e(m), gW(m * n), gb(n);
    for (std::size_t i = 0; i < n; ++i) weight[i] = all(scale * static_cast<T>(a.importance[i]));
    for (std::size_t r = 0; r < a.shape.instances; ++r) {
        const T* W = a.W + r * m * n;
        const T* b = a.b + r * n;
        std::fill(gW.begin(), gW.end(), Vec<T>{});
        std::fill(gb.begin(), gb.end(), Vec<T>{});
        for (std::size_t s = 0; s < B; s += L) {
            const Mask<T> in_batch = lanes_below<T>(B - s);
            for (std::size_t i = 0; i < n; ++i)
                x[i] = where<T>(in_batch, inputs<T>(a.keys[r], toy_model::counter(a.step, i, s, a.shape), density, offsets));
            for (std::size_t k = 0; k < m; ++k) {
                const T* Wk = W + k * n;
                Vec<T> hk = Wk[0] * x[0];
                for (std::size_t i = 1; i < n; ++i) hk = fmadd(all(Wk[i]), x[i], hk);
                h[k] = hk;
            }
            for (std::size_t i = 0; i < n; ++i) {
                Vec<T> o = all(b[i]);
                for (std::size_t k = 0; k < m; ++k) o = fmadd(all(W[k * n + i]), h[k], o);
                d[i] = where<T>((o > Vec<T>{}) & in_batch, weight[i] * (o - x[i]));
                gb[i] = gb[i] + d[i];
            }
            for (std::size_t k = 0; k < m; ++k) {
                const T* Wk = W + k * n;
                Vec<T> ek = Wk[0] * d[0];
                for (std::size_t i = 1; i < n; ++i) ek = fmadd(all(Wk[i]), d[i], ek);
                Vec<T>* g = &gW[k * n];
                for (std::size_t i = 0; i < n; ++i) g[i] = fmadd(ek, x[i], fmadd(h[k], d[i], g[i]));
            }
        }
        for (std::size_t j = 0; j < m * n; ++j) a.gW[r * m * n + j] = halving_sum<T>(gW[j]);
        for (std::size_t i = 0; i < n; ++i) a.gb[r * n + i] = halving_sum<T>(gb[i]);
    }
}

inline kernels::ToyFamily this_build() { return {draw_batch<float>, draw_batch<double>, fused_gradient<float>, fused_gradient<double>}; }

}  // namespace toy
}  // namespace
}  // namespace ffn::train
