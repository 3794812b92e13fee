// AVX-512F micro-kernels: sgemm 12x32 and dgemm 12x16. This file alone is
// compiled with -mavx512f.
//
// Register budget (32 zmm): 24 accumulators (12 rows x 2 vectors) + 2 vectors
// of B + 1 broadcast of A = 27 of 32. Per k step: 2 loads of B, 12
// broadcasts, 24 FMAs.
//
// Cache blocks, measured on an AVX-512 machine with full-width FMA units
// (48 KiB L1d, 1 MiB L2 per core, 32 MiB shared L3). The driver walks each
// 12 x KC sliver of A (in L1d) across a sub-panel of NC_L2 packed columns
// of B (in L2), each B sliver streamed from L2 by the hardware prefetcher;
// the MC x KC block of A (144 rows) shares L2 with the sub-panel; NC x KC of
// B sits in L3. Goto's order (NC_L2 = NR) keeps a KC x NR sliver of B in L1d
// instead, too big at these sizes, so A and B both streamed from L2: in full
// calls this order gained 1-2%. KC is the canonical kBlockK = 256 shared by
// every family (it was 512 here, 1-2% faster than 256 at NC_L2 = 256);
// NC_L2 = 512 keeps the sub-panel at the 512 KiB that measured best. That
// pair has not been re-measured on an AVX-512 machine. dgemm: MC 72, NC
// 2048, NC_L2 256 (the same bytes).
//
// On Zen 4 a 512-bit FMA issues as two 256-bit halves, so there AVX-512 wins
// by fewer instructions and a larger register tile; the machine above has
// full-width units (twice the AVX2 peak).
#include <immintrin.h>

#include <algorithm>

#include "gemm/kernel.h"
#include "gemm/kernels/finish.h"
#include "gemm/kernels/pack_b.h"
#include "gemm/kernels/small_gemm.h"
#include "gemm/kernels/avx2/simd_avx2.h"
#include "gemm/kernels/tile_kernel.h"

namespace ffn::gemm {

namespace {

constexpr int kMR = 12;

struct F32x16 {
    using T = float;
    using V = __m512;
    static constexpr int W = 16;
    static V zero() { return _mm512_setzero_ps(); }
    static V load(const T* p) { return _mm512_load_ps(p); }
    static V loadu(const T* p) { return _mm512_loadu_ps(p); }
    static void store(T* p, V v) { _mm512_store_ps(p, v); }
    static void storeu(T* p, V v) { _mm512_storeu_ps(p, v); }
    static V set1(T x) { return _mm512_set1_ps(x); }
    static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
    static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
    static V add(V a, V b) { return _mm512_add_ps(a, b); }
    // x > 0 ? x : 0, NaN to 0 (max returns its second operand on NaN).
    static V relu(V x) { return _mm512_max_ps(x, zero()); }
    // Lane l of repeat(v, repeat_index(g)) is lane l / g of v.
    using Index = __m512i;
    static Index repeat_index(int group) {
        alignas(64) int idx[W];
        for (int l = 0; l < W; ++l) idx[l] = l / group;
        return _mm512_load_si512(idx);
    }
    static V repeat(V v, Index idx) { return _mm512_permutexvar_ps(idx, v); }
    static V where_positive(V test, V x) { return _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(test, zero(), _CMP_GT_OQ), x); }
    // The first n lanes (n <= W); the others read as zero and are not written.
    static __mmask16 mask(int n) { return static_cast<__mmask16>((1u << n) - 1); }
    // Full vectors skip the mask: masked stores are slow on some cores (AMD).
    static V loadn(const T* p, int n) { return n == W ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(mask(n), p); }
    static void storen(T* p, V v, int n) { n == W ? _mm512_storeu_ps(p, v) : _mm512_mask_storeu_ps(p, mask(n), v); }
};

struct F64x8 {
    using T = double;
    using V = __m512d;
    static constexpr int W = 8;
    static V zero() { return _mm512_setzero_pd(); }
    static V load(const T* p) { return _mm512_load_pd(p); }
    static V loadu(const T* p) { return _mm512_loadu_pd(p); }
    static void store(T* p, V v) { _mm512_store_pd(p, v); }
    static void storeu(T* p, V v) { _mm512_storeu_pd(p, v); }
    static V set1(T x) { return _mm512_set1_pd(x); }
    static V fmadd(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
    static V mul(V a, V b) { return _mm512_mul_pd(a, b); }
    static V add(V a, V b) { return _mm512_add_pd(a, b); }
    static V relu(V x) { return _mm512_max_pd(x, zero()); }
    using Index = __m512i;
    static Index repeat_index(int group) {
        alignas(64) long long idx[W];
        for (int l = 0; l < W; ++l) idx[l] = l / group;
        return _mm512_load_si512(idx);
    }
    static V repeat(V v, Index idx) { return _mm512_permutexvar_pd(idx, v); }
    static V where_positive(V test, V x) { return _mm512_maskz_mov_pd(_mm512_cmp_pd_mask(test, zero(), _CMP_GT_OQ), x); }
    static __mmask8 mask(int n) { return static_cast<__mmask8>((1u << n) - 1); }
    static V loadn(const T* p, int n) { return n == W ? _mm512_loadu_pd(p) : _mm512_maskz_loadu_pd(mask(n), p); }
    static void storen(T* p, V v, int n) { n == W ? _mm512_storeu_pd(p, v) : _mm512_mask_storeu_pd(p, mask(n), v); }
};

// Packs 12 rows of A k-major: 16 k at a time, the 12 rows (plus 4 zero rows)
// go through a 16 x 16 register transpose and each k's 12 values are stored
// with a full 16-lane store, the next store (12 lanes on) overwriting the 4
// spare lanes. The portable loop moved one value per load and store and took
// ~10% of a 4096x2048x512 product.
void pack_rows_12(const float* a, std::int64_t lda, std::int64_t rows, std::int64_t kc, float* dst) {
    std::int64_t k = 0;
    for (; k + 16 <= kc; k += 16) {
        __m512 r[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) r[i] = i < rows ? _mm512_loadu_ps(a + i * lda + k) : _mm512_setzero_ps();
        __m512 t[16];
#pragma GCC unroll 8
        for (int i = 0; i < 16; i += 2) {
            t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
            t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
        }
#pragma GCC unroll 4
        for (int i = 0; i < 16; i += 4) {
            r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
            r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
            r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
            r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
        }
#pragma GCC unroll 2
        for (int h = 0; h < 16; h += 8) {
#pragma GCC unroll 4
            for (int i = 0; i < 4; ++i) {
                t[h + i] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0x88);
                t[h + i + 4] = _mm512_shuffle_f32x4(r[h + i], r[h + i + 4], 0xdd);
            }
        }
#pragma GCC unroll 8
        for (int i = 0; i < 8; ++i) {
            r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
            r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
        }
        // r[j] now holds k + j's values of rows 0..15, in this lane order.
#pragma GCC unroll 16
        for (int j = 0; j < 16; ++j) _mm512_storeu_ps(dst + (k + j) * kMR, r[j]);
    }
    for (; k < kc; ++k)
        for (std::int64_t i = 0; i < kMR; ++i) dst[k * kMR + i] = i < rows ? a[i * lda + k] : 0.0f;
}

// Packs 12 columns of a transposed A: per k one masked 12-lane load and one
// store.
void pack_cols_12(const float* a, std::int64_t lda, std::int64_t rows, std::int64_t kc, float* dst) {
    const __mmask16 valid = static_cast<__mmask16>((1u << rows) - 1);
    if (kc <= 0) return;
    // Each full store runs 4 floats into the next k's slot, which that k then
    // overwrites; the last one is masked so nothing past this call's kc changes.
    for (std::int64_t k = 0; k + 1 < kc; ++k) _mm512_storeu_ps(dst + k * kMR, _mm512_maskz_loadu_ps(valid, a + k * lda));
    const std::int64_t last = kc - 1;
    _mm512_mask_storeu_ps(dst + last * kMR, 0x0fff, _mm512_maskz_loadu_ps(valid, a + last * lda));
}

// r[c] becomes column c of the 16 x 16 block whose row i was r[i]: 32-bit
// then 64-bit interleaves within each 128-bit lane, then a 4 x 4 transpose
// of the lanes.
void transpose_16x16(__m512 r[16]) {
    __m512 t[16];
    for (int i = 0; i < 16; i += 2) {
        t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
    }
    const auto pd = [](__m512 x) { return _mm512_castps_pd(x); };
    for (int i = 0; i < 16; i += 4) {
        r[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[i]), pd(t[i + 2])));
        r[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[i]), pd(t[i + 2])));
        r[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(pd(t[i + 1]), pd(t[i + 3])));
        r[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(pd(t[i + 1]), pd(t[i + 3])));
    }
    // r[4 i + j], lane L: column 4 L + j of rows 4 i .. 4 i + 3.
    for (int j = 0; j < 4; ++j) {
        const __m512 x0 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0x44), x1 = _mm512_shuffle_f32x4(r[j], r[4 + j], 0xEE);
        const __m512 x2 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0x44), x3 = _mm512_shuffle_f32x4(r[8 + j], r[12 + j], 0xEE);
        t[j] = _mm512_shuffle_f32x4(x0, x2, 0x88);
        t[4 + j] = _mm512_shuffle_f32x4(x0, x2, 0xDD);
        t[8 + j] = _mm512_shuffle_f32x4(x1, x3, 0x88);
        t[12 + j] = _mm512_shuffle_f32x4(x1, x3, 0xDD);
    }
    for (int c = 0; c < 16; ++c) r[c] = t[c];
}

// Slivers of at most 4 or 8 rows (M = 1024 and 4096 leave 4, 512 and 2048
// leave 8) run a 4- or 8-row kernel: padding rows cost 1-2% of a product
// with M = 512 or 1024 otherwise.
template <class S>
MicroKernel<typename S::T> kernel_for_rows(std::int64_t m) {
    if (m <= 4) return tile_kernel<S, kMR, 4>;
    if (m <= 8) return tile_kernel<S, kMR, 8>;
    return nullptr;
}

}  // namespace

KernelFamily avx512_family() {
    // The small path's reductions run in 256-bit vectors (kReductionLanes).
    return {fma_peak_loop<F32x16, 12>,
            {.kernel = tile_kernel<F32x16, kMR>,
             .small = small_gemm<F32x16, F32x8>,
             .MR = kMR,
             .NR = 32,
             .MC = 144,
             .NC = 4096,
             .NC_L2 = 512,
             .pack_rows = pack_rows_12,
             .pack_cols = pack_cols_12,
             .finish = finish_block<F32x16>,
             .pack_b = pack_b_rows<F32x16>,
             .pack_bt = pack_bt<F32x16, transpose_16x16>,
             .kernel_for_rows = kernel_for_rows<F32x16>},
            {.kernel = tile_kernel<F64x8, kMR>,
             .small = small_gemm<F64x8, F64x4>,
             .MR = kMR,
             .NR = 16,
             .MC = 72,
             .NC = 2048,
             .NC_L2 = 256,
             .finish = finish_block<F64x8>,
             .pack_b = pack_b_rows<F64x8>,
             .kernel_for_rows = kernel_for_rows<F64x8>}};
}

}  // namespace ffn::gemm
