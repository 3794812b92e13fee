#pragma once
// Unpacked products for small or degenerate shapes (the width sweep's 400 x 1
// by 1 x m and 400 x m by m x 1), where packing and padding a register tile
// would cost more than the arithmetic. Like tile_kernel.h it holds no
// intrinsics: the traits type S supplies them, and each ISA's file
// instantiates it under its own flags.
//
// Two forms, chosen by the shape alone (never by thread count):
//  - rows:  C[i, j..j+W) = sum_k op(A)[i,k] * op(B)[k, j..j+W)  when op(B)'s
//           rows are contiguous and N fills a vector;
//  - dots:  C[i, j] = op(A)[i, :] . op(B)[:, j], vectorised along k when both
//           are contiguous in k; four rows share each load of op(B).
// Anything else takes the scalar loop. Sums run in increasing k.
#include <cstdint>

#include "gemm/gemm.h"

namespace ffn::gemm {

template <class T>
inline void small_store(T* c, T sum, T alpha, T beta) {
    const T scaled = alpha * sum;
    *c = beta == T(0) ? scaled : scaled + beta * *c;
}

template <class S>
void small_gemm(Trans ta, Trans tb, std::int64_t M, std::int64_t N, std::int64_t K, typename S::T alpha,
                const typename S::T* A, std::int64_t lda, const typename S::T* B, std::int64_t ldb,
                typename S::T beta, typename S::T* C, std::int64_t ldc) {
    using T = typename S::T;
    using V = typename S::V;
    constexpr int W = S::W;
    // Strides of op(A) and op(B) along k and along their other index.
    const std::int64_t a_k = ta == Trans::no ? 1 : lda, a_i = ta == Trans::no ? lda : 1;
    const std::int64_t b_k = tb == Trans::no ? ldb : 1, b_j = tb == Trans::no ? 1 : ldb;
    const V va = S::set1(alpha), vb = S::set1(beta);

    if (b_j == 1 && N >= W) {
        for (std::int64_t i = 0; i < M; ++i) {
            const T* a = A + i * a_i;
            T* c = C + i * ldc;
            std::int64_t j = 0;
            for (; j + 2 * W <= N; j += 2 * W) {
                V acc0 = S::zero(), acc1 = S::zero();
                for (std::int64_t k = 0; k < K; ++k) {
                    const V ak = S::set1(a[k * a_k]);
                    acc0 = S::fmadd(ak, S::loadu(B + k * b_k + j), acc0);
                    acc1 = S::fmadd(ak, S::loadu(B + k * b_k + j + W), acc1);
                }
                const V s0 = S::mul(va, acc0), s1 = S::mul(va, acc1);
                S::storeu(c + j, beta == T(0) ? s0 : S::add(s0, S::mul(vb, S::loadu(c + j))));
                S::storeu(c + j + W, beta == T(0) ? s1 : S::add(s1, S::mul(vb, S::loadu(c + j + W))));
            }
            for (; j + W <= N; j += W) {
                V acc = S::zero();
                for (std::int64_t k = 0; k < K; ++k) acc = S::fmadd(S::set1(a[k * a_k]), S::loadu(B + k * b_k + j), acc);
                const V s = S::mul(va, acc);
                S::storeu(c + j, beta == T(0) ? s : S::add(s, S::mul(vb, S::loadu(c + j))));
            }
            for (; j < N; ++j) {
                T sum = 0;
                for (std::int64_t k = 0; k < K; ++k) sum += a[k * a_k] * B[k * b_k + j];
                small_store(c + j, sum, alpha, beta);
            }
        }
        return;
    }

    if (a_k == 1 && b_k == 1 && K >= W) {
        const std::int64_t k_vec = K / W * W;
        for (std::int64_t j = 0; j < N; ++j) {
            const T* b = B + j * b_j;
            std::int64_t i = 0;
            for (; i + 4 <= M; i += 4) {
                const T* a = A + i * a_i;
                V acc[4] = {S::zero(), S::zero(), S::zero(), S::zero()};
                for (std::int64_t k = 0; k < k_vec; k += W) {
                    const V bk = S::loadu(b + k);
#pragma GCC unroll 4
                    for (int r = 0; r < 4; ++r) acc[r] = S::fmadd(S::loadu(a + r * a_i + k), bk, acc[r]);
                }
#pragma GCC unroll 4
                for (int r = 0; r < 4; ++r) {
                    T sum = S::hsum(acc[r]);
                    for (std::int64_t k = k_vec; k < K; ++k) sum += a[r * a_i + k] * b[k];
                    small_store(C + (i + r) * ldc + j, sum, alpha, beta);
                }
            }
            for (; i < M; ++i) {
                const T* a = A + i * a_i;
                V acc = S::zero();
                for (std::int64_t k = 0; k < k_vec; k += W) acc = S::fmadd(S::loadu(a + k), S::loadu(b + k), acc);
                T sum = S::hsum(acc);
                for (std::int64_t k = k_vec; k < K; ++k) sum += a[k] * b[k];
                small_store(C + i * ldc + j, sum, alpha, beta);
            }
        }
        return;
    }

    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) {
            T sum = 0;
            for (std::int64_t k = 0; k < K; ++k) sum += A[i * a_i + k * a_k] * B[k * b_k + j * b_j];
            small_store(C + i * ldc + j, sum, alpha, beta);
        }
}

}  // namespace ffn::gemm
