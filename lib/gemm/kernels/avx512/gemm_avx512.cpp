// AVX-512F micro-kernels: sgemm 12x32 and dgemm 12x16. This file alone is
// compiled with -mavx512f.
//
// Register budget (32 zmm): 24 accumulators (12 rows x 2 vectors) + 2 vectors
// of B + 1 broadcast of A = 27 of 32. Per k step: 2 loads of B, 12
// broadcasts (folded into the FMA as {1to16} memory operands), 24 FMAs.
//
// Cache blocks: the KC x NR sliver of packed B must stay in L1d while A
// slivers stream: 192 x 32 floats = 24 KiB of the 32-48 KiB L1d. The MC x KC
// block of A (192 x 192 floats = 144 KiB) lives in the 1 MiB L2; NC x KC of B
// (4096 x 192 floats = 3 MiB) in the shared L3. On Zen 4 a 512-bit FMA issues
// as two 256-bit halves, so this family's edge over AVX2 is fewer
// instructions and a larger register tile, not wider arithmetic.
#include <immintrin.h>

#include "gemm/kernel.h"

namespace ffn::gemm {

namespace {

constexpr std::int64_t kMR = 12;

template <class T>
struct Simd;

template <>
struct Simd<float> {
    using V = __m512;
    static constexpr int W = 16;
    static __m512 zero() { return _mm512_setzero_ps(); }
    static __m512 load(const float* p) { return _mm512_load_ps(p); }
    static __m512 loadu(const float* p) { return _mm512_loadu_ps(p); }
    static void storeu(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
    static void store(float* p, __m512 v) { _mm512_store_ps(p, v); }
    static __m512 set1(float x) { return _mm512_set1_ps(x); }
    static __m512 fmadd(__m512 a, __m512 b, __m512 c) { return _mm512_fmadd_ps(a, b, c); }
    static __m512 mul(__m512 a, __m512 b) { return _mm512_mul_ps(a, b); }
    static __m512 add(__m512 a, __m512 b) { return _mm512_add_ps(a, b); }
};

template <>
struct Simd<double> {
    using V = __m512d;
    static constexpr int W = 8;
    static __m512d zero() { return _mm512_setzero_pd(); }
    static __m512d load(const double* p) { return _mm512_load_pd(p); }
    static __m512d loadu(const double* p) { return _mm512_loadu_pd(p); }
    static void storeu(double* p, __m512d v) { _mm512_storeu_pd(p, v); }
    static void store(double* p, __m512d v) { _mm512_store_pd(p, v); }
    static __m512d set1(double x) { return _mm512_set1_pd(x); }
    static __m512d fmadd(__m512d a, __m512d b, __m512d c) { return _mm512_fmadd_pd(a, b, c); }
    static __m512d mul(__m512d a, __m512d b) { return _mm512_mul_pd(a, b); }
    static __m512d add(__m512d a, __m512d b) { return _mm512_add_pd(a, b); }
};

// One kernel body for both types: W lanes per vector, NR = 2W.
template <class T>
void kernel_12x2w(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t ldc, std::int64_t m, std::int64_t n,
                  T alpha, T beta) {
    using S = Simd<T>;
    using V = typename S::V;
    constexpr int W = S::W;
    constexpr int NR = 2 * W;
    V acc[kMR][2];
    for (auto& row : acc) row[0] = row[1] = S::zero();
    for (std::int64_t k = 0; k < kc; ++k, a += kMR, b += NR) {
        const V b0 = S::load(b), b1 = S::load(b + W);
#pragma GCC unroll 12
        for (int i = 0; i < kMR; ++i) {
            const V ai = S::set1(a[i]);
            acc[i][0] = S::fmadd(ai, b0, acc[i][0]);
            acc[i][1] = S::fmadd(ai, b1, acc[i][1]);
        }
    }
    const V va = S::set1(alpha), vb = S::set1(beta);
    if (m == kMR && n == NR) {
        for (int i = 0; i < kMR; ++i)
            for (int v = 0; v < 2; ++v) {
                T* p = c + i * ldc + W * v;
                const V scaled = S::mul(va, acc[i][v]);
                S::storeu(p, beta == T(0) ? scaled : S::add(scaled, S::mul(vb, S::loadu(p))));
            }
        return;
    }
    alignas(64) T tile[kMR][NR];
    for (int i = 0; i < kMR; ++i)
        for (int v = 0; v < 2; ++v) S::store(&tile[i][W * v], S::mul(va, acc[i][v]));
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            T& out = c[i * ldc + j];
            out = beta == T(0) ? tile[i][j] : tile[i][j] + beta * out;
        }
}

bool avx512_supported() {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f");
}

}  // namespace

KernelFamily avx512_family() {
    return {"avx512", avx512_supported, {kernel_12x2w<float>, kMR, 32, 192, 192, 4096},
            {kernel_12x2w<double>, kMR, 16, 192, 96, 2048}};
}

}  // namespace ffn::gemm
