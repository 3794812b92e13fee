// AVX2 + FMA micro-kernels: sgemm 6x16 and dgemm 6x8. This file alone is
// compiled with -mavx2 -mfma.
//
// Register budget (16 ymm): 12 accumulators (6 rows x 2 vectors) + 2 vectors
// of B + 1 broadcast of A = 15 of 16. Per k step: 2 loads of B, 6 broadcasts,
// 12 FMAs, so the two FMA pipes, not the load ports, set the pace.
//
// Cache blocks: the KC x NR sliver of packed B is reused by every MR-row
// sliver of A, so it must stay in L1d: 256 x 16 floats = 16 KiB of the 32-48
// KiB L1d. The MC x KC block of A (120 x 256 floats = 120 KiB) sits in the
// 1 MiB L2 beside the B panel's streaming. NC x KC of B (4096 x 256 floats =
// 4 MiB) stays in the shared 32 MiB L3. dgemm halves MC and NC to keep the
// same byte sizes.
#include <immintrin.h>

#include "gemm/kernel.h"
#include "gemm/kernels/small_gemm.h"
#include "gemm/kernels/tile_kernel.h"

namespace ffn::gemm {

namespace {

constexpr int kMR = 6;

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
    // The first n lanes (n <= W); the others read as zero and are not written.
    static __m256i mask(int n) { return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)); }
    static V loadn(const T* p, int n) { return n == W ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, mask(n)); }
    static void storen(T* p, V v, int n) { n == W ? _mm256_storeu_ps(p, v) : _mm256_maskstore_ps(p, mask(n), v); }
    // Pairwise tree: halves, then quarters, then the last pair.
    static T hsum(V v) {
        __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
        x = _mm_add_ps(x, _mm_movehl_ps(x, x));
        return _mm_cvtss_f32(_mm_add_ss(x, _mm_movehdup_ps(x)));
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
    static __m256i mask(int n) { return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3)); }
    static V loadn(const T* p, int n) { return n == W ? _mm256_loadu_pd(p) : _mm256_maskload_pd(p, mask(n)); }
    static void storen(T* p, V v, int n) { n == W ? _mm256_storeu_pd(p, v) : _mm256_maskstore_pd(p, mask(n), v); }
    static T hsum(V v) {
        __m128d x = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
        return _mm_cvtsd_f64(_mm_add_sd(x, _mm_unpackhi_pd(x, x)));
    }
};

// 10 independent chains cover FMA latency (4 cycles) on two pipes.
double fma_loop(std::int64_t iterations) {
    __m256 acc[10];
#pragma GCC unroll 10
    for (int i = 0; i < 10; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i));
    const __m256 x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-7f);
    for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 10
        for (int i = 0; i < 10; ++i) acc[i] = _mm256_fmadd_ps(acc[i], x, y);
    __m256 sum = acc[0];
#pragma GCC unroll 10
    for (int i = 1; i < 10; ++i) sum = _mm256_add_ps(sum, acc[i]);
    volatile float sink = _mm256_cvtss_f32(sum);
    (void)sink;
    return static_cast<double>(iterations) * 10 * 8 * 2;
}

bool avx2_supported() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

}  // namespace

KernelFamily avx2_family() {
    return {"avx2", avx2_supported, fma_loop, {tile_kernel<F32x8, kMR>, small_gemm<F32x8>, kMR, 16, 256, 120, 4096},
            {tile_kernel<F64x4, kMR>, small_gemm<F64x4>, kMR, 8, 256, 60, 2048}};
}

}  // namespace ffn::gemm
