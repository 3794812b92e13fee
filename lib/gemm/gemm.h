#pragma once
// The one matrix-product entry point of ffn-lab. Every product in the library
// goes through here, so the kernel behind it can change without callers
// noticing.
//
// C = alpha * op(A) * op(B) + beta * C, all row-major; op(X) = X or X^T.
// op(A) is M x K, op(B) is K x N, C is M x N. lda/ldb/ldc are row strides in
// elements of the matrices as stored. BLAS semantics: beta == 0 never reads C
// (NaNs already in C do not leak), alpha == 0 never reads A or B.
#include <cstdint>

namespace ffn::gemm {

enum class Trans : bool { no = false, yes = true };

template <class T>
void gemm(Trans trans_a, Trans trans_b, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
          const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C,
          std::int64_t ldc);

// Name of the kernel in use ("ref" until a SIMD core is selected); manifests
// record it.
const char* active_kernel();

}  // namespace ffn::gemm
