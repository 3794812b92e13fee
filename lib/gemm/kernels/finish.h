#pragma once
// The SIMD part of a gemm epilogue: bias add and the built-in pointwise op on
// an m x n block of C, as the driver's portable apply_epilogue would do them
// and bitwise equal to it (one rounded add; max and select do not round).
// Like tile_kernel.h it holds no intrinsics: the traits type S supplies them.
//
// A block that is whole rows of a contiguous C is walked as one flat array,
// so narrow rows (the width sweep's 400 x 2 hidden layer) still fill vectors;
// the bias then repeats every n lanes, which a vector can hold when n divides
// its width.
#include <algorithm>
#include <cstdint>

#include "gemm/gemm.h"

namespace ffn::gemm {
// Internal linkage on purpose: see tile_kernel.h.
namespace {

template <class S, Pointwise Op, bool Bias>
inline typename S::V finish_vector(typename S::V v, typename S::V bias, typename S::V aux) {
    if constexpr (Bias) v = S::add(v, bias);
    if constexpr (Op == Pointwise::relu) v = S::relu(v);
    if constexpr (Op == Pointwise::relu_grad) v = S::where_positive(aux, v);
    return v;
}

// `count` contiguous values of C from c (aux alongside): full vectors, then
// one partial. `bias` is a pointer that advances with c, or with Tiled, one
// vector that repeats for every chunk.
template <class S, Pointwise Op, bool Bias, bool Tiled>
inline void finish_run(typename S::T* c, const typename S::T* aux, const typename S::T* bias,
                       typename S::V tiled_bias, std::int64_t count) {
    using V = typename S::V;
    constexpr int W = S::W;
    auto bias_at = [&](std::int64_t t, int n) {
        if constexpr (Bias && !Tiled) return S::loadn(bias + t, n);
        return tiled_bias;
    };
    auto aux_at = [&](std::int64_t t, int n) {
        if constexpr (Op == Pointwise::relu_grad) return S::loadn(aux + t, n);
        return S::zero();
    };
    std::int64_t t = 0;
    for (; t + W <= count; t += W) S::storeu(c + t, finish_vector<S, Op, Bias>(S::loadu(c + t), bias_at(t, W), aux_at(t, W)));
    if (t < count) {
        const int n = static_cast<int>(count - t);
        const V v = finish_vector<S, Op, Bias>(S::loadn(c + t, n), bias_at(t, n), aux_at(t, n));
        S::storen(c + t, v, n);
    }
}

template <class S, Pointwise Op, bool Bias>
void finish_typed(const Epilogue<typename S::T>& ep, typename S::T* C, std::int64_t ldc, std::int64_t i0,
                  std::int64_t j0, std::int64_t m, std::int64_t n) {
    using T = typename S::T;
    constexpr int W = S::W;
    const bool flat = j0 == 0 && n == ldc && (Op != Pointwise::relu_grad || ep.ld_aux == n) &&
                      (!Bias || (n <= W && W % n == 0));
    const T* aux = Op == Pointwise::relu_grad ? ep.aux + i0 * ep.ld_aux + j0 : nullptr;
    if (flat) {
        alignas(64) T tiled[W];
        for (int l = 0; l < W; ++l) tiled[l] = Bias ? ep.bias[l % n] : T(0);
        finish_run<S, Op, Bias, true>(C + i0 * ldc, aux, nullptr, S::loadu(tiled), m * n);
        return;
    }
    for (std::int64_t i = 0; i < m; ++i)
        finish_run<S, Op, Bias, false>(C + (i0 + i) * ldc + j0, aux ? aux + i * ep.ld_aux : nullptr,
                                       Bias ? ep.bias + j0 : nullptr, S::zero(), n);
}

template <class S, Pointwise Op>
void finish_op(const Epilogue<typename S::T>& ep, typename S::T* C, std::int64_t ldc, std::int64_t i0,
               std::int64_t j0, std::int64_t m, std::int64_t n) {
    if (ep.bias) finish_typed<S, Op, true>(ep, C, ldc, i0, j0, m, n);
    else finish_typed<S, Op, false>(ep, C, ldc, i0, j0, m, n);
}

template <class S>
void finish_block(const Epilogue<typename S::T>& ep, typename S::T* C, std::int64_t ldc, std::int64_t i0,
                  std::int64_t j0, std::int64_t m, std::int64_t n) {
    switch (ep.pointwise) {
        case Pointwise::none:
            if (ep.bias) finish_typed<S, Pointwise::none, true>(ep, C, ldc, i0, j0, m, n);
            return;
        case Pointwise::relu: return finish_op<S, Pointwise::relu>(ep, C, ldc, i0, j0, m, n);
        case Pointwise::relu_grad: return finish_op<S, Pointwise::relu_grad>(ep, C, ldc, i0, j0, m, n);
    }
}

}  // namespace
}  // namespace ffn::gemm
