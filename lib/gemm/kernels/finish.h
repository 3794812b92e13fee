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

template <class S>
inline typename S::V pointwise(Pointwise op, typename S::V v, const typename S::T* aux, int n) {
    switch (op) {
        case Pointwise::relu: return S::relu(v);
        case Pointwise::relu_grad: return S::where_positive(S::loadn(aux, n), v);
        case Pointwise::none: break;
    }
    return v;
}

template <class S>
void finish_block(const Epilogue<typename S::T>& ep, typename S::T* C, std::int64_t ldc, std::int64_t i0,
                  std::int64_t j0, std::int64_t m, std::int64_t n) {
    using T = typename S::T;
    using V = typename S::V;
    constexpr int W = S::W;
    const Pointwise op = ep.pointwise;
    const bool flat = j0 == 0 && n == ldc && (op != Pointwise::relu_grad || ep.ld_aux == n) &&
                      (!ep.bias || (n <= W && W % n == 0));
    if (flat) {
        alignas(64) T tiled[W];
        for (int l = 0; l < W; ++l) tiled[l] = ep.bias ? ep.bias[l % n] : T(0);
        const V bias = S::loadu(tiled);
        T* c = C + i0 * ldc;
        const T* aux = op == Pointwise::relu_grad ? ep.aux + i0 * ep.ld_aux : nullptr;
        const std::int64_t total = m * n;
        for (std::int64_t t = 0; t < total; t += W) {
            const int k = static_cast<int>(std::min<std::int64_t>(W, total - t));
            V v = S::loadn(c + t, k);
            if (ep.bias) v = S::add(v, bias);
            S::storen(c + t, pointwise<S>(op, v, aux ? aux + t : nullptr, k), k);
        }
        return;
    }
    for (std::int64_t i = i0; i < i0 + m; ++i) {
        T* c = C + i * ldc + j0;
        const T* aux = op == Pointwise::relu_grad ? ep.aux + i * ep.ld_aux + j0 : nullptr;
        for (std::int64_t j = 0; j < n; j += W) {
            const int k = static_cast<int>(std::min<std::int64_t>(W, n - j));
            V v = S::loadn(c + j, k);
            if (ep.bias) v = S::add(v, S::loadn(ep.bias + j0 + j, k));
            S::storen(c + j, pointwise<S>(op, v, aux ? aux + j : nullptr, k), k);
        }
    }
}

}  // namespace
}  // namespace ffn::gemm
