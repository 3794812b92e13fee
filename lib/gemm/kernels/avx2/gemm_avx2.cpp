// AVX2 + FMA micro-kernels: sgemm 6x16 and dgemm 6x8. This file alone is
// compiled with -mavx2 -mfma.
//
// Register budget (16 ymm): 12 accumulators (6 rows x 2 vectors) + 2 vectors
// of B + 1 broadcast of A = 15 of 16. Per k step: 2 loads of B, 6 broadcasts,
// 12 FMAs, so the two FMA pipes, not the load ports, set the pace.
//
// Cache blocks (KC is the canonical kBlockK = 256): the 6 x 256 sliver of A (6 KiB) stays in L1d while the
// driver walks it across a sub-panel of NC_L2 = 512 columns of packed B (256
// x 512 floats = 512 KiB, in L2); the MC x KC block of A (120 x 256 floats =
// 120 KiB) shares L2 with it. NC x KC of B (4096 x 256 floats = 4 MiB) stays
// in the shared 32 MiB L3. dgemm halves MC, NC and NC_L2 to keep the same
// byte sizes. (Against Goto's order, NC_L2 = NR: 1-3% more at the FFN shapes.)
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

constexpr int kMR = 6;

// r[c] becomes column c of the 8 x 8 block whose row i was r[i].
void transpose_8x8(__m256 r[8]) {
    __m256 t[8], u[8];
    for (int i = 0; i < 8; i += 2) {
        t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
        t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
    }
    for (int i = 0; i < 8; i += 4) {
        u[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
        u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xEE);
        u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
        u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xEE);
    }
    // u[j] (rows 0-3) and u[4 + j] (rows 4-7), lane L: column 4 L + j.
    for (int j = 0; j < 4; ++j) {
        r[j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x20);
        r[4 + j] = _mm256_permute2f128_ps(u[j], u[4 + j], 0x31);
    }
}

}  // namespace

KernelFamily avx2_family() {
    return {fma_peak_loop<F32x8, 10>,
            {.kernel = tile_kernel<F32x8, kMR>,
             .small = small_gemm<F32x8, F32x8>,
             .MR = kMR,
             .NR = 16,
             .MC = 120,
             .NC = 4096,
             .NC_L2 = 512,
             .finish = finish_block<F32x8>,
             .pack_b = pack_b_rows<F32x8>,
             .pack_bt = pack_bt<F32x8, transpose_8x8>},
            {.kernel = tile_kernel<F64x4, kMR>,
             .small = small_gemm<F64x4, F64x4>,
             .MR = kMR,
             .NR = 8,
             .MC = 60,
             .NC = 2048,
             .NC_L2 = 256,
             .finish = finish_block<F64x4>,
             .pack_b = pack_b_rows<F64x4>}};
}

}  // namespace ffn::gemm
