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
#include "gemm/kernels/avx2/simd_avx2.h"
#include "gemm/kernels/tile_kernel.h"

namespace ffn::gemm {

namespace {

constexpr int kMR = 6;

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
    return {"avx2", avx2_supported, fma_loop, {tile_kernel<F32x8, kMR>, small_gemm<F32x8, F32x8>, kMR, 16, 256, 120, 4096},
            {tile_kernel<F64x4, kMR>, small_gemm<F64x4, F64x4>, kMR, 8, 256, 60, 2048}};
}

}  // namespace ffn::gemm
