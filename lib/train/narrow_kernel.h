#pragma once
// The full-batch forward and backward pass of many 1-m-1 MLPs at once, one
// instance per lane of a block of kLanes (train/narrow_fit.h). Included by
// narrow_fit.cpp (built for any x86-64) and narrow_fit_avx2.cpp (the same
// lines with -mavx2): the lane loops vectorise, and every lane runs the
// scalar formula's operations in the scalar order, so the two builds and
// every lane count give the same bits. No lane reads another's numbers.
//
// Internal linkage on purpose, as in nn/activation_loops.h: the two builds
// of these inline functions must not be merged by the linker.
#include <cstddef>
#include <cstring>

// GCC and clang warn that a vector argument's ABI depends on -mavx: these
// functions have internal linkage and never cross a build's boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

#include "nn/activation_loops.h"
#include "train/narrow_fit.h"

namespace ffn::train {
namespace {
namespace narrow {

constexpr std::size_t kLanes = kNarrowLanes;

// kLanes values of T as one value: GCC's vector extension (clang has it
// too), whose operators act lane by lane with the scalar operator's IEEE
// rounding. The AVX2 build maps it onto ymm registers, the other onto
// pairs of xmm registers; the bits are the same. Memory holds plain T
// arrays, read and written through load and store, which assume no more
// alignment than T's.
template <class T>
struct LanesOf {
    typedef T type __attribute__((vector_size(kLanes * sizeof(T))));
};
template <class T>
using Lanes = typename LanesOf<T>::type;

template <class T>
Lanes<T> load(const T* p) {
    Lanes<T> v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

template <class T>
void store(T* p, Lanes<T> v) {
    std::memcpy(p, &v, sizeof v);
}

// A unit's value h = act(z), and with it what its backward pass needs
// (aux); backward(aux, up) is up * act'(z), as nn::multiply_by_derivative
// computes it. kKeeps: the forward pass keeps h and aux for the backward
// pass, where computing them again would cost more than memory does.
struct Relu {
    static constexpr bool kKeeps = false;
    template <class V>
    static V value(V z) { return z > 0 ? z : V{}; }
    template <class V>
    static void forward(V z, V& h, V& aux) {
        h = value(z);
        aux = z;
    }
    template <class V>
    static V backward(V aux, V up) { return aux > 0 ? up : V{}; }
};

struct Identity {
    static constexpr bool kKeeps = false;
    template <class V>
    static V value(V z) { return z; }
    template <class V>
    static void forward(V z, V& h, V& aux) {
        h = z;
        aux = z;
    }
    template <class V>
    static V backward(V, V up) { return up; }
};

// A smooth activation's formula from nn/activation_loops.h on all lanes at
// once (its kernels take vectors), as the library's activation layer
// applies it to each element.
template <class F>
struct Smooth {
    static constexpr bool kKeeps = true;  // an exp or erfc per unit and sample
    template <class V>
    static V value(V z) { return F::value(z); }
    template <class V>
    static void forward(V z, V& h, V& aux) {
        h = F::value(z);
        aux = F::derivative(z);
    }
    template <class V>
    static V backward(V aux, V up) { return up * aux; }
};

// One block of kLanes instances. Parameters and gradients of a block are
// laid out [w(m) | b(m) | v(m) | c], each entry kLanes wide, for
// y = c + sum_j v_j act(w_j x + b_j). Gradients are written, not added to;
// sq[l] gets lane l's sum of squared errors in double.
//
// The operations, per lane (the contract the tests pin): for each sample
// t, y = c, then y = y + v_j h_j for j = 0..m-1; r = y - target and
// g_t = (2 / n) r. Each gradient is a sum over samples in increasing t,
// adding one term at a time to a running sum from zero: gc of g_t, gv_j of
// g_t h_j, gw_j of dz x_t and gb_j of dz, with dz = act'(z_j) applied to
// g_t v_j.
//
// Two passes keep the running sums in registers: the forward pass over the
// samples (units inner, y in a register) leaves every g_t in `residual`;
// the backward pass takes the units kTile at a time (samples inner, their
// sums in registers) and recomputes z and act(z) for ReLU, which is
// cheaper than storing them, or reads what the forward pass kept for a
// smooth unit (`kept`: [unit][sample][h, aux][lane]). Reordering the loops
// changes no lane's operations.
constexpr std::size_t kTile = 2;

// Units j .. j+J-1: their three gradients, summed over the samples.
template <class Unit, std::size_t J, class T>
void backward_tile(std::size_t n, std::size_t m, std::size_t j, const T* x, const T* residual, const T* p, T* g,
                   const T* kept) {
    using V = Lanes<T>;
    constexpr std::size_t L = kLanes;
    V w[J], b[J], v[J], sw[J], sb[J], sv[J];
    for (std::size_t i = 0; i < J; ++i) {
        w[i] = load(p + (j + i) * L);
        b[i] = load(p + (m + j + i) * L);
        v[i] = load(p + (2 * m + j + i) * L);
        sw[i] = sb[i] = sv[i] = V{};
    }
    for (std::size_t t = 0; t < n; ++t) {
        const T xt = x[t];
        const V r = load(residual + t * L);
        for (std::size_t i = 0; i < J; ++i) {
            V h, aux;
            if constexpr (Unit::kKeeps) {
                h = load(kept + (((j + i) * n + t) * 2) * L);
                aux = load(kept + (((j + i) * n + t) * 2 + 1) * L);
            } else {
                Unit::forward(w[i] * xt + b[i], h, aux);
            }
            sv[i] = sv[i] + r * h;
            const V dz = Unit::backward(aux, r * v[i]);
            sw[i] = sw[i] + dz * xt;
            sb[i] = sb[i] + dz;
        }
    }
    for (std::size_t i = 0; i < J; ++i) {
        store(g + (j + i) * L, sw[i]);
        store(g + (m + j + i) * L, sb[i]);
        store(g + (2 * m + j + i) * L, sv[i]);
    }
}

template <class Unit, class T>
void block_pass(std::size_t m, std::size_t n, const T* x, const T* target, const T* p, T* g, T* residual,
                T* kept, double* sq) {
    using V = Lanes<T>;
    using D = Lanes<double>;
    constexpr std::size_t L = kLanes;
    const V c = load(p + 3 * m * L);
    for (std::size_t t = 0; t < n; ++t) {
        const T xt = x[t];
        V y = c;
        for (std::size_t j = 0; j < m; ++j) {
            const V z = load(p + j * L) * xt + load(p + (m + j) * L);
            V h;
            if constexpr (Unit::kKeeps) {
                V aux;
                Unit::forward(z, h, aux);
                store(kept + ((j * n + t) * 2) * L, h);
                store(kept + ((j * n + t) * 2 + 1) * L, aux);
            } else {
                h = Unit::value(z);
            }
            y = y + load(p + (2 * m + j) * L) * h;
        }
        store(residual + t * L, y - target[t]);
    }
    // The residuals' squares (in double) and gradients in a loop of their
    // own: inside the one above, the double sums took the registers the
    // units need.
    D squared{};
    V sum_c{};
    const T scale = T(2) / static_cast<T>(n);
    for (std::size_t t = 0; t < n; ++t) {
        const V r = load(residual + t * L);
        const D rd = __builtin_convertvector(r, D);
        squared += rd * rd;
        const V gr = scale * r;
        store(residual + t * L, gr);
        sum_c = sum_c + gr;
    }
    store(g + 3 * m * L, sum_c);
    std::size_t j = 0;
    for (; j + kTile <= m; j += kTile) backward_tile<Unit, kTile>(n, m, j, x, residual, p, g, kept);
    for (; j < m; ++j) backward_tile<Unit, 1>(n, m, j, x, residual, p, g, kept);
    for (std::size_t l = 0; l < L; ++l) sq[l] = squared[l];
}

template <class Unit, class T>
void all_blocks(const NarrowPass<T>& pass) {
    const std::size_t block = (3 * pass.width + 1) * kLanes;
    for (std::size_t k = 0; k < pass.blocks; ++k)
        block_pass<Unit>(pass.width, pass.samples, pass.x, pass.target, pass.params + k * block, pass.grads + k * block,
                         pass.residual_buf, pass.kept_buf, pass.squared_error + k * kLanes);
}

template <class T>
void run_pass(const NarrowPass<T>& pass) {
    switch (pass.activation) {
        case nn::Activation::relu: return all_blocks<Relu>(pass);
        case nn::Activation::identity: return all_blocks<Identity>(pass);
        default:
            nn::loops::with_formula(pass.activation, [&](auto f) { all_blocks<Smooth<decltype(f)>>(pass); });
            return;
    }
}

}  // namespace narrow
}  // namespace
}  // namespace ffn::train
