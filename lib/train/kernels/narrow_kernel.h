#pragma once
// The full-batch forward and backward pass of many 1-m-1 MLPs at once, one
// instance per lane of a block of L (train/narrow_fit.h). Included by
// kernels/ref/narrow_pass_ref.cpp (built for any x86-64, 8 lanes),
// kernels/avx2/narrow_pass_avx2.cpp (the same lines with -mavx2, 8 lanes) and
// kernels/avx512/narrow_pass_avx512.cpp (-mavx512f, 16 lanes): the lane
// loops vectorise, and every lane runs the scalar
// formula's operations in the scalar order, so the builds and every lane
// count give the same bits. No lane reads another's numbers.
//
// Internal linkage on purpose, as in nn/kernels/activation_loops.h: the three builds
// of these inline functions must not be merged by the linker.
#include <cstddef>
#include <cstring>

// GCC and clang warn that a vector argument's ABI depends on -mavx: these
// functions have internal linkage and never cross a build's boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "nn/kernels/activation_loops.h"
#include "train/kernels/narrow_kernels.h"
#include "train/narrow_fit.h"

namespace ffn::train {
namespace {
namespace narrow {

// L values of T as one value: GCC's vector extension (clang has it
// too), whose operators act lane by lane with the scalar operator's IEEE
// rounding. The AVX-512 build maps 16 floats onto a zmm register, the
// AVX2 build 8 onto a ymm, the baseline build 8 onto two xmm; the bits are
// the same. Memory holds plain T
// arrays, read and written through load and store, which assume no more
// alignment than T's.
template <class T, std::size_t L>
struct LanesOf {
    typedef T type __attribute__((vector_size(L * sizeof(T))));
};
template <class T, std::size_t L>
using Lanes = typename LanesOf<T, L>::type;

using math::kernels::fmadd;

template <class V, class T>
V load(const T* p) {
    V v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class T, class V>
void store(T* p, V v) {
    std::memcpy(p, &v, sizeof v);
}

// A unit's value h = act(z), and what its backward pass needs. kKeeps:
// the forward pass keeps h and aux = act'(z) for the backward pass, where
// computing them again would cost more than memory does; otherwise the
// backward pass computes z again, and through(z, r) = r act'(z), which for
// these units also gives r act(z) as through(z, r) z.
struct Relu {
    static constexpr bool kKeeps = false;
    template <class V>
    static V value(V z) { return math::kernels::positive_part(z); }
    template <class V>
    static V through(V z, V r) { return z > V{} ? r : V{}; }
};

struct Identity {
    static constexpr bool kKeeps = false;
    template <class V>
    static V value(V z) { return z; }
    template <class V>
    static V through(V, V r) { return r; }
};

// A smooth activation's formula from nn/kernels/activation_loops.h on all lanes at
// once (its kernels take vectors), as the library's activation layer
// applies it to each element.
template <class F>
struct Smooth {
    static constexpr bool kKeeps = true;  // an exp or erfc per unit and sample
    template <class V>
    static V value(V z) { return F::value(z); }
    // One exp or erfc for both (F::both has each result's one-at-a-time bits).
    template <class V>
    static void forward(V z, V& h, V& aux) {
        const auto both = F::both(z);
        h = both.value;
        aux = both.derivative;
    }
};

// One block of L instances. Parameters and gradients of a block are
// laid out [w(m) | b(m) | v(m) | c], each entry L wide, for
// y = c + sum_j v_j act(w_j x + b_j). Gradients are written, not added to;
// sq[l] gets lane l's sum of squared errors in double.
//
// The operations, per lane (the contract the tests pin), fma(a, b, c)
// being a b + c rounded once: for each sample t, z_j = fma(w_j, x_t, b_j),
// y = c, then y = fma(v_j, h_j, y) for j = 0..m-1; r = y - target and
// g_t = (2 / n) r. Each gradient is a sum over samples in increasing t,
// one term at a time into a running sum from zero, with q = g_t act'(z_j):
// gc += g_t; gv_j = fma(g_t, h_j, gv_j) (for ReLU and identity units, where
// h = act'(z) z, fma(q, z_j, gv_j)); sw_j = fma(q, x_t, sw_j), sb_j += q;
// then gw_j = v_j sw_j and gb_j = v_j sb_j.
//
// Two passes keep the running sums in registers: the forward pass, a few
// samples at a time (forward_samples: their y in registers, the units
// inner), leaves every g_t in `residual`;
// the backward pass takes the units kTile at a time (samples inner, their
// sums in registers) and recomputes z and act(z) for ReLU, which is
// cheaper than storing them, or reads what the forward pass kept for a
// smooth unit (`kept`: [unit][sample][h, aux][lane]). Reordering the loops
// changes no lane's operations.
constexpr std::size_t kTile = 2;

// Units j .. j+J-1: their three gradients, summed over the samples. The
// output weight v_j is a factor of every term of gw_j and gb_j, so it
// multiplies their sums once at the end instead of each term.
template <class Unit, std::size_t L, std::size_t J, class T>
void backward_tile(std::size_t n, std::size_t m, std::size_t j, const T* x, const T* residual, const T* p, T* g,
                   const T* kept) {
    using V = Lanes<T, L>;
    V w[J], b[J], sw[J], sb[J], sv[J];
    for (std::size_t i = 0; i < J; ++i) {
        w[i] = load<V>(p + (j + i) * L);
        b[i] = load<V>(p + (m + j + i) * L);
        sw[i] = sb[i] = sv[i] = V{};
    }
    for (std::size_t t = 0; t < n; ++t) {
        const V xt = V{} + x[t];
        const V r = load<V>(residual + t * L);
        for (std::size_t i = 0; i < J; ++i) {
            V q;  // r act'(z)
            if constexpr (Unit::kKeeps) {
                q = r * load<V>(kept + (((j + i) * n + t) * 2 + 1) * L);
                sv[i] = fmadd(r, load<V>(kept + (((j + i) * n + t) * 2) * L), sv[i]);
            } else {
                const V z = fmadd(w[i], xt, b[i]);
                q = Unit::through(z, r);
                sv[i] = fmadd(q, z, sv[i]);
            }
            sw[i] = fmadd(q, xt, sw[i]);
            sb[i] = sb[i] + q;
        }
    }
    for (std::size_t i = 0; i < J; ++i) {
        const V v = load<V>(p + (2 * m + j + i) * L);
        store(g + (j + i) * L, v * sw[i]);
        store(g + (m + j + i) * L, v * sb[i]);
        store(g + (2 * m + j + i) * L, sv[i]);
    }
}

// Samples t .. t+S-1 of the forward pass: each sample's y is its own sum
// over the units in increasing j, as for one sample alone; S of them side
// by side keep the vector adder busy while each sum waits on its last add.
template <class Unit, std::size_t L, std::size_t S, class T>
void forward_samples(std::size_t m, std::size_t n, std::size_t t, const T* x, const T* target, const T* p, T* residual,
                     T* kept) {
    using V = Lanes<T, L>;
    V y[S];
    for (std::size_t s = 0; s < S; ++s) y[s] = load<V>(p + 3 * m * L);
    for (std::size_t j = 0; j < m; ++j) {
        const V w = load<V>(p + j * L), b = load<V>(p + (m + j) * L), v = load<V>(p + (2 * m + j) * L);
#pragma GCC unroll 8  // S chains in flight: a smooth unit's formula is one long dependency chain
        for (std::size_t s = 0; s < S; ++s) {
            const V z = fmadd(w, V{} + x[t + s], b);
            V h;
            if constexpr (Unit::kKeeps) {
                V aux;
                Unit::forward(z, h, aux);
                store(kept + ((j * n + t + s) * 2) * L, h);
                store(kept + ((j * n + t + s) * 2 + 1) * L, aux);
            } else {
                h = Unit::value(z);
            }
            y[s] = fmadd(v, h, y[s]);
        }
    }
    for (std::size_t s = 0; s < S; ++s) store(residual + (t + s) * L, y[s] - target[t + s]);
}

template <class Unit, std::size_t L, class T>
void block_pass(std::size_t m, std::size_t n, const T* x, const T* target, const T* p, T* g, T* residual,
                T* kept, double* sq) {
    using V = Lanes<T, L>;
    static_assert(L % 8 == 0, "blocks of 8 or 16 lanes");
    constexpr std::size_t S = 8;  // measured best of 1, 4 and 8, for ReLU and smooth units alike
    std::size_t t = 0;
    for (; t + S <= n; t += S) forward_samples<Unit, L, S>(m, n, t, x, target, p, residual, kept);
    for (; t < n; ++t) forward_samples<Unit, L, 1>(m, n, t, x, target, p, residual, kept);
    // The residuals' squares (in double) and gradients in a loop of their
    // own: inside the one above, the double sums took the registers the
    // units need.
    // Each lane's sum of squares in double, eight lanes to a 512-bit
    // register: one vector of all L doubles was kept on the stack, and its
    // loop waited on memory.
    using D8 = Lanes<double, 8>;
    using T8 = Lanes<T, 8>;
    constexpr std::size_t kChunks = L / 8;
    D8 squared[kChunks] = {};
    V sum_c{};
    const T scale = T(2) / static_cast<T>(n);
    for (std::size_t t = 0; t < n; ++t) {
        for (std::size_t c = 0; c < kChunks; ++c) {
            const D8 rd = __builtin_convertvector(load<T8>(residual + t * L + 8 * c), D8);
            squared[c] += rd * rd;
        }
        const V r = load<V>(residual + t * L);
        const V gr = scale * r;
        store(residual + t * L, gr);
        sum_c = sum_c + gr;
    }
    store(g + 3 * m * L, sum_c);
    std::size_t j = 0;
    for (; j + kTile <= m; j += kTile) backward_tile<Unit, L, kTile>(n, m, j, x, residual, p, g, kept);
    for (; j < m; ++j) backward_tile<Unit, L, 1>(n, m, j, x, residual, p, g, kept);
    for (std::size_t l = 0; l < L; ++l) sq[l] = squared[l / 8][l % 8];
}

template <class Unit, std::size_t L, class T>
void all_blocks(const NarrowPass<T>& pass) {
    const std::size_t block = (3 * pass.width + 1) * L;
    for (std::size_t k = 0; k < pass.blocks; ++k)
        block_pass<Unit, L>(pass.width, pass.samples, pass.x, pass.target, pass.params + k * block, pass.grads + k * block,
                            pass.residual_buf, pass.kept_buf, pass.squared_error + k * L);
}

// A build's pass, with L lanes to a block (pass.lanes must be L).
template <std::size_t L, class T>
void run_pass(const NarrowPass<T>& pass) {
    switch (pass.activation) {
        case nn::Activation::relu: return all_blocks<Relu, L>(pass);
        case nn::Activation::identity: return all_blocks<Identity, L>(pass);
        default:
            nn::loops::with_formula(pass.activation, [&](auto f) { all_blocks<Smooth<decltype(f)>, L>(pass); });
            return;
    }
}

// This build's entry of the registry (narrow_kernels.h), L lanes to a block.
template <std::size_t L>
kernels::NarrowFamily this_build() {
    return {run_pass<L, float>, run_pass<L, double>, L};
}

}  // namespace narrow
}  // namespace
}  // namespace ffn::train
