// Portable micro-kernels: plain loops in the scalar type, compiled without ISA
// flags. They are the oracle the SIMD kernels are tested against and the
// fallback on machines without AVX2.
#include "gemm/kernel.h"

namespace ffn::gemm {

namespace {

constexpr std::int64_t kMR = 4, kNR = 8;

template <class T>
void ref_kernel(std::int64_t kc, const T* a, const T* b, T* c, std::int64_t ldc, std::int64_t m, std::int64_t n,
                T alpha, T beta) {
    T acc[kMR][kNR] = {};
    for (std::int64_t k = 0; k < kc; ++k, a += kMR, b += kNR)
        for (std::int64_t i = 0; i < kMR; ++i)
            for (std::int64_t j = 0; j < kNR; ++j) acc[i][j] += a[i] * b[j];
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            T& out = c[i * ldc + j];
            const T scaled = alpha * acc[i][j];
            out = beta == T(0) ? scaled : scaled + beta * out;
        }
}

template <class T>
void ref_small(Trans ta, Trans tb, std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A,
               std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc) {
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            T sum = 0;
            for (std::int64_t k = 0; k < K; ++k)
                sum += (ta == Trans::no ? A[i * lda + k] : A[k * lda + i]) * (tb == Trans::no ? B[k * ldb + j] : B[j * ldb + k]);
            T& out = C[i * ldc + j];
            const T scaled = alpha * sum;
            out = beta == T(0) ? scaled : scaled + beta * out;
        }
}

bool always() { return true; }

// Scalar multiply-adds in 8 independent chains: what portable code reaches.
double fma_loop(std::int64_t iterations) {
    float acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = static_cast<float>(i);
    for (std::int64_t it = 0; it < iterations; ++it)
        for (float& a : acc) a = a * 0.999999f + 1e-7f;
    volatile float sink = acc[0] + acc[7];
    (void)sink;
    return static_cast<double>(iterations) * 8 * 2;
}

}  // namespace

// Goto's order (NC_L2 = NR): KC x NR of B (8 KiB in float) stays in L1 while
// A slivers stream past.
KernelFamily ref_family() {
    return {"ref", always, fma_loop, {ref_kernel<float>, ref_small<float>, kMR, kNR, 256, 128, 4096, kNR}, {ref_kernel<double>, ref_small<double>, kMR, kNR, 256, 64, 2048, kNR}};
}

}  // namespace ffn::gemm
