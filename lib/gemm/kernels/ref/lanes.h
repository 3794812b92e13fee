#pragma once
// Portable "vector" traits for the shared kernel bodies: W lanes of T in a
// plain array, every operation lane by lane, multiply-adds by std::fma (one
// rounding, as the SIMD families' fmadd). Instantiated with these, the
// tile, small-path and epilogue templates become the reference family: the
// same canonical order of operations as the SIMD families, in scalar code,
// so every family gives bitwise the same results.
#include <cmath>
#include <cstdint>

namespace ffn::gemm {
// Internal linkage on purpose: see tile_kernel.h.
namespace {

template <class Scalar, int Width>
struct Lanes {
    using T = Scalar;
    static constexpr int W = Width;
    struct V {
        T v[W];
    };
    static V zero() { return V{}; }
    static V set1(T x) {
        V r;
        for (T& l : r.v) l = x;
        return r;
    }
    static V loadn(const T* p, int n) {
        V r{};
        for (int l = 0; l < n; ++l) r.v[l] = p[l];
        return r;
    }
    static V load(const T* p) { return loadn(p, W); }
    static V loadu(const T* p) { return loadn(p, W); }
    static void storen(T* p, V v, int n) {
        for (int l = 0; l < n; ++l) p[l] = v.v[l];
    }
    static void store(T* p, V v) { storen(p, v, W); }
    static void storeu(T* p, V v) { storen(p, v, W); }
    static V fmadd(V a, V b, V c) {
        for (int l = 0; l < W; ++l) c.v[l] = std::fma(a.v[l], b.v[l], c.v[l]);
        return c;
    }
    static V mul(V a, V b) {
        for (int l = 0; l < W; ++l) a.v[l] *= b.v[l];
        return a;
    }
    static V add(V a, V b) {
        for (int l = 0; l < W; ++l) a.v[l] += b.v[l];
        return a;
    }
    // x > 0 ? x : 0, NaN to 0: what the SIMD max(x, 0) gives.
    static V relu(V x) {
        for (T& l : x.v) l = l > T(0) ? l : T(0);
        return x;
    }
    static V where_positive(V test, V x) {
        for (int l = 0; l < W; ++l) x.v[l] = test.v[l] > T(0) ? x.v[l] : T(0);
        return x;
    }
    // Lane l of repeat(v, repeat_index(g)) is lane l / g of v.
    struct Index {
        int of[W];
    };
    static Index repeat_index(int group) {
        Index idx;
        for (int l = 0; l < W; ++l) idx.of[l] = l / group;
        return idx;
    }
    static V repeat(V v, Index idx) {
        V r;
        for (int l = 0; l < W; ++l) r.v[l] = v.v[idx.of[l]];
        return r;
    }
    // Lane r of the result is the sum of the lanes of p[r] in the pairwise
    // tree of the SIMD families: ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + ...).
    static V hsum_rows(const V* p) {
        V r;
        for (int row = 0; row < W; ++row) r.v[row] = tree_sum(p[row].v, W);
        return r;
    }

private:
    static T tree_sum(const T* x, int n) { return n == 1 ? x[0] : tree_sum(x, n / 2) + tree_sum(x + n / 2, n / 2); }
};

}  // namespace
}  // namespace ffn::gemm
