#pragma once
// 256-bit vector traits (AVX2 + FMA) for the shared kernel bodies. Included
// only by files compiled with -mavx2 -mfma or wider: the AVX2 family, and
// the AVX-512 family, whose small path takes its dot products at this width
// (a 512-bit horizontal sum per row costs more than it saves; measured at
// 400x32x1: 0.45 us in ymm against 0.62 us in zmm).
#include <immintrin.h>

namespace ffn::gemm {
// Internal linkage on purpose: each ISA's file compiles its own copy of these
// bodies under its own flags. With external linkage the linker could keep the
// AVX-512 build of a shared inline function for the AVX2 family too, and an
// AVX2-only CPU would fault on it.
namespace {

struct F32x8 {
    using T = float;
    using V = __m256;
    static constexpr int W = 8;
    static V zero() { return _mm256_setzero_ps(); }
    static V load(const T* p) { return _mm256_load_ps(p); }
    static V loadu(const T* p) { return _mm256_loadu_ps(p); }
    static void store(T* p, V v) { _mm256_store_ps(p, v); }
    static void storeu(T* p, V v) { _mm256_storeu_ps(p, v); }
    static V set1(T x) { return _mm256_set1_ps(x); }
    static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
    static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
    static V add(V a, V b) { return _mm256_add_ps(a, b); }
    // x > 0 ? x : 0, NaN to 0 (max returns its second operand on NaN).
    static V relu(V x) { return _mm256_max_ps(x, zero()); }
    // Lane l of repeat(v, repeat_index(g)) is lane l / g of v.
    using Index = __m256i;
    static Index repeat_index(int group) {
        alignas(32) int idx[W];
        for (int l = 0; l < W; ++l) idx[l] = l / group;
        return _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
    }
    static V repeat(V v, Index idx) { return _mm256_permutevar8x32_ps(v, idx); }
    static V where_positive(V test, V x) { return _mm256_and_ps(x, _mm256_cmp_ps(test, zero(), _CMP_GT_OQ)); }
    // The first n lanes (n <= W); the others read as zero and are not written.
    static __m256i mask(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
    static V loadn(const T* p, int n) { return n == W ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask(n)); }
    static void storen(T* p, V v, int n) { n == W ? _mm256_storeu_ps(p, v) : _mm256_maskstore_ps(p, mask(n), v); }
    // Lane r of the result is the sum of the lanes of p[r], each summed as
    // ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)): one order for every r.
    static V hsum_rows(const V* p) {
        const V q0 = _mm256_hadd_ps(_mm256_hadd_ps(p[0], p[1]), _mm256_hadd_ps(p[2], p[3]));
        const V q1 = _mm256_hadd_ps(_mm256_hadd_ps(p[4], p[5]), _mm256_hadd_ps(p[6], p[7]));
        return _mm256_add_ps(_mm256_permute2f128_ps(q0, q1, 0x20), _mm256_permute2f128_ps(q0, q1, 0x31));
    }
};

struct F64x4 {
    using T = double;
    using V = __m256d;
    static constexpr int W = 4;
    static V zero() { return _mm256_setzero_pd(); }
    static V load(const T* p) { return _mm256_load_pd(p); }
    static V loadu(const T* p) { return _mm256_loadu_pd(p); }
    static void store(T* p, V v) { _mm256_store_pd(p, v); }
    static void storeu(T* p, V v) { _mm256_storeu_pd(p, v); }
    static V set1(T x) { return _mm256_set1_pd(x); }
    static V fmadd(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
    static V mul(V a, V b) { return _mm256_mul_pd(a, b); }
    static V add(V a, V b) { return _mm256_add_pd(a, b); }
    static V relu(V x) { return _mm256_max_pd(x, zero()); }
    // AVX2 has no variable double permute: move each double as its two floats.
    using Index = __m256i;
    static Index repeat_index(int group) {
        alignas(32) int idx[2 * W];
        for (int l = 0; l < W; ++l) idx[2 * l] = 2 * (l / group), idx[2 * l + 1] = 2 * (l / group) + 1;
        return _mm256_load_si256(reinterpret_cast<const __m256i*>(idx));
    }
    static V repeat(V v, Index idx) { return _mm256_castps_pd(_mm256_permutevar8x32_ps(_mm256_castpd_ps(v), idx)); }
    static V where_positive(V test, V x) { return _mm256_and_pd(x, _mm256_cmp_pd(test, zero(), _CMP_GT_OQ)); }
    static __m256i mask(int n) { return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3)); }
    static V loadn(const T* p, int n) { return n == W ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, mask(n)); }
    static void storen(T* p, V v, int n) { n == W ? _mm256_storeu_pd(p, v) : _mm256_maskstore_pd(p, mask(n), v); }
    // Lane r: (l0 + l1) + (l2 + l3) of p[r].
    static V hsum_rows(const V* p) {
        const V h01 = _mm256_hadd_pd(p[0], p[1]), h23 = _mm256_hadd_pd(p[2], p[3]);
        return _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20), _mm256_permute2f128_pd(h01, h23, 0x31));
    }
};

}  // namespace
}  // namespace ffn::gemm
