#include "gemm/gemm.h"

#include <stdexcept>

namespace ffn::gemm {

namespace {

template <class T>
T at(const T* X, std::int64_t ld, Trans t, std::int64_t row, std::int64_t col) {
    return t == Trans::no ? X[row * ld + col] : X[col * ld + row];
}

}  // namespace

// Reference implementation: every output element is one dot product summed in
// increasing k, in the scalar type. The blocked SIMD core replaces this body.
template <class T>
void gemm(Trans trans_a, Trans trans_b, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
          const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C,
          std::int64_t ldc) {
    if (M < 0 || N < 0 || K < 0) throw std::invalid_argument("gemm: negative dimension");
    for (std::int64_t i = 0; i < M; ++i) {
        for (std::int64_t j = 0; j < N; ++j) {
            T acc = 0;
            if (alpha != T(0))
                for (std::int64_t k = 0; k < K; ++k)
                    acc += at(A, lda, trans_a, i, k) * at(B, ldb, trans_b, k, j);
            T& c = C[i * ldc + j];
            c = beta == T(0) ? alpha * acc : alpha * acc + beta * c;
        }
    }
}

const char* active_kernel() { return "ref"; }

template void gemm<float>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, float,
                          const float*, std::int64_t, const float*, std::int64_t, float, float*,
                          std::int64_t);
template void gemm<double>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, double,
                           const double*, std::int64_t, const double*, std::int64_t, double,
                           double*, std::int64_t);

}  // namespace ffn::gemm
