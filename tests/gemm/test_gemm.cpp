#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "core/rng.h"
#include "gemm/gemm.h"

using ffn::gemm::Trans;

namespace {

// Double-accumulated reference, independent of the library's code.
template <class T>
std::vector<double> reference(bool ta, bool tb, int M, int N, int K, double alpha, const std::vector<T>& A, int lda,
                              const std::vector<T>& B, int ldb, double beta, const std::vector<T>& C, int ldc) {
    std::vector<double> out(static_cast<std::size_t>(M) * ldc);
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) {
            double acc = 0;
            for (int k = 0; k < K; ++k)
                acc += static_cast<double>(ta ? A[k * lda + i] : A[i * lda + k]) *
                       static_cast<double>(tb ? B[j * ldb + k] : B[k * ldb + j]);
            out[i * ldc + j] = alpha * acc + (beta == 0 ? 0.0 : beta * static_cast<double>(C[i * ldc + j]));
        }
    return out;
}

template <class T>
void check_shape(int M, int N, int K, bool ta, bool tb, double alpha, double beta) {
    ffn::Rng rng(static_cast<std::uint64_t>(M * 1000003 + N * 1009 + K));
    const int lda = (ta ? M : K) + 3, ldb = (tb ? K : N) + 1, ldc = N + 2;
    std::vector<T> A(static_cast<std::size_t>((ta ? K : M) * lda)), B(static_cast<std::size_t>((tb ? N : K) * ldb));
    std::vector<T> C(static_cast<std::size_t>(M * ldc));
    for (auto& v : A) v = static_cast<T>(rng.uniform(-1, 1));
    for (auto& v : B) v = static_cast<T>(rng.uniform(-1, 1));
    for (auto& v : C) v = beta == 0 ? std::numeric_limits<T>::quiet_NaN() : static_cast<T>(rng.uniform(-1, 1));
    const auto want = reference(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
    ffn::gemm::gemm<T>(ta ? Trans::yes : Trans::no, tb ? Trans::yes : Trans::no, M, N, K, static_cast<T>(alpha),
                       A.data(), lda, B.data(), ldb, static_cast<T>(beta), C.data(), ldc);
    // Each output sums K products of numbers in [-1, 1]: the rounding error
    // is at most about K * eps (plus one rounding each for alpha and beta).
    const double bound = (K + 4) * std::numeric_limits<T>::epsilon();
    for (int i = 0; i < M; ++i)
        for (int j = 0; j < N; ++j) REQUIRE(std::fabs(C[i * ldc + j] - want[i * ldc + j]) <= bound);
}

}  // namespace

TEST_CASE_TEMPLATE("gemm matches a double reference on odd shapes transposes and strides", T, float, double) {
    for (int M : {1, 2, 7, 17})
        for (int N : {1, 3, 16, 33})
            for (int K : {1, 15, 65})
                for (bool ta : {false, true})
                    for (bool tb : {false, true}) check_shape<T>(M, N, K, ta, tb, 1.0, 0.0);
    check_shape<T>(31, 29, 63, false, true, -0.5, 2.0);
    check_shape<T>(9, 5, 7, true, false, 0.0, 1.0);
}
