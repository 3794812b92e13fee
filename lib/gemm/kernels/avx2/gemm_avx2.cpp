// AVX2 + FMA micro-kernels: sgemm 6x16 and dgemm 6x8. This file alone is
// compiled with -mavx2 -mfma.
//
// Register budget (16 ymm): 12 accumulators (6 rows x 2 vectors) + 2 vectors
// of B + 1 broadcast of A = 15 of 16. Per k step: 2 loads of B, 6 broadcasts,
// 12 FMAs, so the two FMA pipes, not the load ports, set the pace.
//
// Cache blocks: the KC x NR sliver of packed B is reused by every MR-row
// sliver of A, so it must stay in L1d: 256 x 16 floats = 16 KiB of the 32-48
// KiB L1d. The MC x KC block of A (128 x 256 floats = 128 KiB) sits in the
// 1 MiB L2 with room for the B panel's streaming. NC x KC of B (4096 x 256
// floats = 4 MiB) stays in the shared 32 MiB L3. dgemm halves MC and NC to
// keep the same byte sizes.
#include <immintrin.h>


#include "gemm/kernel.h"

namespace ffn::gemm {

namespace {

constexpr std::int64_t kMR = 6;


inline void store_rows_f32(__m256 (&acc)[kMR][2], float* c, std::int64_t ldc, std::int64_t m, std::int64_t n,
                           float alpha, float beta) {
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
    if (m == kMR && n == 16) {
        for (int i = 0; i < kMR; ++i)
            for (int v = 0; v < 2; ++v) {
                float* p = c + i * ldc + 8 * v;
                const __m256 scaled = _mm256_mul_ps(va, acc[i][v]);
                _mm256_storeu_ps(p, beta == 0.0f ? scaled : _mm256_add_ps(scaled, _mm256_mul_ps(vb, _mm256_loadu_ps(p))));
            }
        return;
    }
    alignas(32) float tile[kMR][16];
    for (int i = 0; i < kMR; ++i)
        for (int v = 0; v < 2; ++v) _mm256_store_ps(&tile[i][8 * v], _mm256_mul_ps(va, acc[i][v]));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            float& out = c[i * ldc + j];
            out = beta == 0.0f ? tile[i][j] : tile[i][j] + beta * out;
        }
}

void sgemm_avx2_6x16(std::int64_t kc, const float* a, const float* b, float* c, std::int64_t ldc, std::int64_t m,
                     std::int64_t n, float alpha, float beta) {
    __m256 acc[kMR][2];
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_ps();
    for (std::int64_t k = 0; k < kc; ++k, a += kMR, b += 16) {
        const __m256 b0 = _mm256_load_ps(b), b1 = _mm256_load_ps(b + 8);
#pragma GCC unroll 6
        for (int i = 0; i < kMR; ++i) {
            const __m256 ai = _mm256_broadcast_ss(a + i);
            acc[i][0] = _mm256_fmadd_ps(ai, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_ps(ai, b1, acc[i][1]);
        }
    }
    store_rows_f32(acc, c, ldc, m, n, alpha, beta);
}

void dgemm_avx2_6x8(std::int64_t kc, const double* a, const double* b, double* c, std::int64_t ldc, std::int64_t m,
                    std::int64_t n, double alpha, double beta) {
    __m256d acc[kMR][2];
    for (auto& row : acc) row[0] = row[1] = _mm256_setzero_pd();
    for (std::int64_t k = 0; k < kc; ++k, a += kMR, b += 8) {
        const __m256d b0 = _mm256_load_pd(b), b1 = _mm256_load_pd(b + 4);
#pragma GCC unroll 6
        for (int i = 0; i < kMR; ++i) {
            const __m256d ai = _mm256_broadcast_sd(a + i);
            acc[i][0] = _mm256_fmadd_pd(ai, b0, acc[i][0]);
            acc[i][1] = _mm256_fmadd_pd(ai, b1, acc[i][1]);
        }
    }
    const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
    if (m == kMR && n == 8) {
        for (int i = 0; i < kMR; ++i)
            for (int v = 0; v < 2; ++v) {
                double* p = c + i * ldc + 4 * v;
                const __m256d scaled = _mm256_mul_pd(va, acc[i][v]);
                _mm256_storeu_pd(p, beta == 0.0 ? scaled : _mm256_add_pd(scaled, _mm256_mul_pd(vb, _mm256_loadu_pd(p))));
            }
        return;
    }
    alignas(32) double tile[kMR][8];
    for (int i = 0; i < kMR; ++i)
        for (int v = 0; v < 2; ++v) _mm256_store_pd(&tile[i][4 * v], _mm256_mul_pd(va, acc[i][v]));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double& out = c[i * ldc + j];
            out = beta == 0.0 ? tile[i][j] : tile[i][j] + beta * out;
        }
}

bool avx2_supported() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

}  // namespace

KernelFamily avx2_family() {
    return {"avx2", avx2_supported, {sgemm_avx2_6x16, kMR, 16, 256, 120, 4096}, {dgemm_avx2_6x8, kMR, 8, 256, 60, 2048}};
}

}  // namespace ffn::gemm
