#pragma once
// Unpacked products for small or thin shapes (the width sweep's 400 x 1 by
// 1 x m, 400 x m by m x 1, and their backward products), where packing and
// padding a register tile would cost more than the arithmetic. Like
// tile_kernel.h it holds no intrinsics: the traits type S supplies them
// (including masked loads and stores for partial vectors), and each ISA's
// file instantiates it under its own flags.
//
// Vector forms chosen by the shape and strides alone (never by the vector
// width or the thread count). Each fixes the order of operations for every
// element of C, so that every family computes it bitwise alike:
//  - rows:    C[i, j..j+W) from op(B)'s contiguous rows, vectorised along N;
//  - columns: C[i..i+W, j) from op(A)'s contiguous columns, along M, for
//             thin outputs (N <= 4). Rows and columns sum each element
//             alike: K < 8 in one chain of fused multiply-adds; longer k
//             loops in four chains (k mod 4, the last K mod 4 terms on chain
//             0), joined as (c0 + c1) + (c2 + c3);
//  - dots:    C[i, j] = op(A)[i, :] . op(B)[:, j] along K, when both are
//             contiguous in k: kReductionLanes chains (k mod lanes, the tail
//             padded with zeros), joined by one pairwise tree;
//  - outer:   K = 1, each element one product;
//  - narrow column sums: a single row or column of C that sums a matrix
//             narrower than kReductionLanes over k, lanes / width of its rows
//             per vector of kReductionLanes (see narrow_column_sums).
// The reduction forms (dots, narrow column sums) take the traits D, whose
// width is kReductionLanes; the others take the family's own S.
#include <algorithm>
#include <cstdint>

#include "gemm/kernel.h"

namespace ffn::gemm {
// Internal linkage on purpose: each ISA's file compiles its own copy of these
// bodies under its own flags. With external linkage the linker could keep the
// AVX-512 build of a shared inline function for the AVX2 family too, and an
// AVX2-only CPU would fault on it.
namespace {

namespace small_detail {

template <class T>
inline void store_scaled(T* c, T sum, T alpha, T beta) {
    const T scaled = alpha * sum;
    *c = beta == T(0) ? scaled : scaled + beta * *c;
}

// Below this many terms one accumulator chain is faster than four plus
// the adds that join them.
constexpr std::int64_t kShortK = 8;

// C[i, j..j+n) for one row i of op(A), n <= W, op(B) rows contiguous.
template <class S>
inline typename S::V row_chunk(const typename S::T* a, std::int64_t a_k, const typename S::T* b, std::int64_t b_k,
                               std::int64_t K, int n) {
    using V = typename S::V;
    if (K < kShortK) {
        V acc = S::zero();
        for (std::int64_t k = 0; k < K; ++k) acc = S::fmadd(S::set1(a[k * a_k]), S::loadn(b + k * b_k, n), acc);
        return acc;
    }
    V acc[4] = {S::zero(), S::zero(), S::zero(), S::zero()};
    std::int64_t k = 0;
    for (; k + 4 <= K; k += 4)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) acc[c] = S::fmadd(S::set1(a[(k + c) * a_k]), S::loadn(b + (k + c) * b_k, n), acc[c]);
    for (; k < K; ++k) acc[0] = S::fmadd(S::set1(a[k * a_k]), S::loadn(b + k * b_k, n), acc[0]);
    return S::add(S::add(acc[0], acc[1]), S::add(acc[2], acc[3]));
}

// C[i, j..j+2W) for one row: two full vectors share each broadcast of A,
// each summed in row_chunk's order.
template <class S>
inline void row_pair(const typename S::T* a, std::int64_t a_k, const typename S::T* b, std::int64_t b_k, std::int64_t K,
                     typename S::V& out0, typename S::V& out1) {
    using V = typename S::V;
    constexpr int W = S::W;
    if (K < kShortK) {
        V acc0 = S::zero(), acc1 = S::zero();
        for (std::int64_t k = 0; k < K; ++k) {
            const V ak = S::set1(a[k * a_k]);
            acc0 = S::fmadd(ak, S::loadu(b + k * b_k), acc0);
            acc1 = S::fmadd(ak, S::loadu(b + k * b_k + W), acc1);
        }
        out0 = acc0;
        out1 = acc1;
        return;
    }
    V acc[4][2];
#pragma GCC unroll 4
    for (int c = 0; c < 4; ++c) acc[c][0] = acc[c][1] = S::zero();
    std::int64_t k = 0;
    for (; k + 4 <= K; k += 4)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) {
            const V ak = S::set1(a[(k + c) * a_k]);
            acc[c][0] = S::fmadd(ak, S::loadu(b + (k + c) * b_k), acc[c][0]);
            acc[c][1] = S::fmadd(ak, S::loadu(b + (k + c) * b_k + W), acc[c][1]);
        }
    for (; k < K; ++k) {
        const V ak = S::set1(a[k * a_k]);
        acc[0][0] = S::fmadd(ak, S::loadu(b + k * b_k), acc[0][0]);
        acc[0][1] = S::fmadd(ak, S::loadu(b + k * b_k + W), acc[0][1]);
    }
    out0 = S::add(S::add(acc[0][0], acc[1][0]), S::add(acc[2][0], acc[3][0]));
    out1 = S::add(S::add(acc[0][1], acc[1][1]), S::add(acc[2][1], acc[3][1]));
}

// C[i..i+n, j) for n <= W rows, op(A) columns contiguous.
template <class S>
inline typename S::V column_chunk(const typename S::T* a, std::int64_t a_k, const typename S::T* b, std::int64_t b_k,
                                  std::int64_t K, int n) {
    using V = typename S::V;
    if (K < kShortK) {
        V acc = S::zero();
        for (std::int64_t k = 0; k < K; ++k) acc = S::fmadd(S::loadn(a + k * a_k, n), S::set1(b[k * b_k]), acc);
        return acc;
    }
    V acc[4] = {S::zero(), S::zero(), S::zero(), S::zero()};
    std::int64_t k = 0;
    for (; k + 4 <= K; k += 4)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c) acc[c] = S::fmadd(S::loadn(a + (k + c) * a_k, n), S::set1(b[(k + c) * b_k]), acc[c]);
    for (; k < K; ++k) acc[0] = S::fmadd(S::loadn(a + k * a_k, n), S::set1(b[k * b_k]), acc[0]);
    return S::add(S::add(acc[0], acc[1]), S::add(acc[2], acc[3]));
}

// sum over k of s[k] * mat[k * cols + j], for each j < cols, into lanes[j]
// (lanes has W slots). For a matrix narrower than a vector (2 <= cols < W,
// cols dividing W) stored contiguously, with s contiguous: each vector holds
// W / cols rows of mat, times s repeated to match; four chains over the row
// groups; then lanes l of equal l mod cols are added in a halving tree.
template <class S>
inline void narrow_column_sums(const typename S::T* mat, const typename S::T* s, std::int64_t K, int cols,
                               typename S::T* lanes) {
    using V = typename S::V;
    constexpr int W = S::W;
    const int group = W / cols;
    const typename S::Index idx = S::repeat_index(cols);
    // `rows` rows of mat from row k, and s[k + r] repeated across row r's lanes.
    auto mat_rows = [&](std::int64_t k, int rows) { return S::loadn(mat + k * cols, rows * cols); };
    auto s_rows = [&](std::int64_t k, int rows) { return S::repeat(S::loadn(s + k, rows), idx); };
    V acc[4] = {S::zero(), S::zero(), S::zero(), S::zero()};
    std::int64_t k = 0;
    for (; k + 4 * group <= K; k += 4 * group)
#pragma GCC unroll 4
        for (int c = 0; c < 4; ++c)
            acc[c] = S::fmadd(mat_rows(k + c * group, group), s_rows(k + c * group, group), acc[c]);
    // The last groups: product and sum rounded separately.
    for (; k < K; k += group) {
        const int rows = static_cast<int>(std::min<std::int64_t>(group, K - k));
        acc[0] = S::add(acc[0], S::mul(mat_rows(k, rows), s_rows(k, rows)));
    }
    S::storeu(lanes, S::add(S::add(acc[0], acc[1]), S::add(acc[2], acc[3])));
    for (int width = W; width > cols; width /= 2)
        for (int l = 0; l < width / 2; ++l) lanes[l] += lanes[l + width / 2];
}

inline bool narrow(std::int64_t cols, int W) { return cols >= 2 && cols < W && W % cols == 0; }

}  // namespace small_detail

// Each form is its own function, kept out of line: inlined together into one
// body they spilled their pointers and strides to the stack on every row
// (10 cycles a row at 1000x1x32). `beta == 0` is decided once per call.

// C = alpha * acc + beta * C for n lanes (beta == 0 never reads C).
template <class S, bool Accumulate>
inline void finish(typename S::T* c, typename S::V acc, typename S::V va, typename S::V vb, int n) {
    const typename S::V scaled = S::mul(va, acc);
    if constexpr (Accumulate) S::storen(c, S::add(scaled, S::mul(vb, S::loadn(c, n))), n);
    else S::storen(c, scaled, n);
}

template <class S, bool Accumulate>
[[gnu::noinline]] void small_rows(std::int64_t M, std::int64_t N, std::int64_t K, typename S::T alpha, const typename S::T* A,
                std::int64_t a_i, std::int64_t a_k, const typename S::T* B, std::int64_t b_k, typename S::T beta,
                typename S::T* C, std::int64_t ldc) {
    using V = typename S::V;
    constexpr int W = S::W;
    const V va = S::set1(alpha), vb = S::set1(beta);
    for (std::int64_t i = 0; i < M; ++i) {
        const typename S::T* a = A + i * a_i;
        typename S::T* c = C + i * ldc;
        std::int64_t j = 0;
        for (; j + 2 * W <= N; j += 2 * W) {
            V c0, c1;
            small_detail::row_pair<S>(a, a_k, B + j, b_k, K, c0, c1);
            finish<S, Accumulate>(c + j, c0, va, vb, W);
            finish<S, Accumulate>(c + j + W, c1, va, vb, W);
        }
        for (; j < N; j += W) {
            const int n = static_cast<int>(std::min<std::int64_t>(W, N - j));
            finish<S, Accumulate>(c + j, small_detail::row_chunk<S>(a, a_k, B + j, b_k, K, n), va, vb, n);
        }
    }
}

template <class S, bool Accumulate>
[[gnu::noinline]] void small_columns(std::int64_t M, std::int64_t N, std::int64_t K, typename S::T alpha, const typename S::T* A,
                   std::int64_t lda, const typename S::T* B, std::int64_t b_j, std::int64_t b_k, typename S::T beta,
                   typename S::T* C, std::int64_t ldc) {
    using T = typename S::T;
    using V = typename S::V;
    constexpr int W = S::W;
    const V va = S::set1(alpha), vb = S::set1(beta);
    alignas(64) T lanes[W];
    for (std::int64_t j = 0; j < N; ++j)
        for (std::int64_t i = 0; i < M; i += W) {
            const int n = static_cast<int>(std::min<std::int64_t>(W, M - i));
            const V acc = small_detail::column_chunk<S>(A + i, lda, B + j * b_j, b_k, K, n);
            if (ldc == 1) {
                finish<S, Accumulate>(C + i + j, acc, va, vb, n);
            } else {
                S::store(lanes, acc);
                for (int l = 0; l < n; ++l) small_detail::store_scaled(C + (i + l) * ldc + j, lanes[l], alpha, beta);
            }
        }
}

// W rows' dot products with b, as one vector of W sums: each row sums its k
// chunks into one vector (W rows are W independent FMA chains), then one
// transposing reduction. Full = false: only the first `rows` rows exist and
// the others stay zero, with every present row summed in the same order.
template <class S, bool Full>
inline typename S::V dots_block(const typename S::T* a, std::int64_t a_i, const typename S::T* b, std::int64_t K,
                                int rows) {
    using V = typename S::V;
    constexpr int W = S::W;
    V acc[W];
#pragma GCC unroll 8
    for (int r = 0; r < W; ++r) acc[r] = S::zero();
    std::int64_t k = 0;
    for (; k + W <= K; k += W) {
        const V bk = S::loadu(b + k);
#pragma GCC unroll 8
        for (int r = 0; r < W; ++r)
            if (Full || r < rows) acc[r] = S::fmadd(S::loadu(a + r * a_i + k), bk, acc[r]);
    }
    if (k < K) {
        const int n = static_cast<int>(K - k);
        const V bk = S::loadn(b + k, n);
#pragma GCC unroll 8
        for (int r = 0; r < W; ++r)
            if (Full || r < rows) acc[r] = S::fmadd(S::loadn(a + r * a_i + k, n), bk, acc[r]);
    }
    return S::hsum_rows(acc);
}

// One dot product per output, W rows at a time (see dots_block), so a row's
// sum does not depend on where the row falls.
template <class S>
[[gnu::noinline]] void small_dots(std::int64_t M, std::int64_t N, std::int64_t K, typename S::T alpha,
                                  const typename S::T* A, std::int64_t a_i, const typename S::T* B, std::int64_t b_j,
                                  typename S::T beta, typename S::T* C, std::int64_t ldc) {
    using T = typename S::T;
    using V = typename S::V;
    constexpr int W = S::W;
    const V va = S::set1(alpha), vb = S::set1(beta);
    for (std::int64_t j = 0; j < N; ++j) {
        const T* b = B + j * b_j;
        for (std::int64_t i = 0; i < M; i += W) {
            const int rows = static_cast<int>(std::min<std::int64_t>(W, M - i));
            const T* a = A + i * a_i;
            const V sums = S::mul(va, rows == W ? dots_block<S, true>(a, a_i, b, K, W) : dots_block<S, false>(a, a_i, b, K, rows));
            T* c = C + i * ldc + j;
            if (ldc == 1) {
                S::storen(c, beta == T(0) ? sums : S::add(sums, S::mul(vb, S::loadn(c, rows))), rows);
            } else {
                alignas(64) T lanes[W];
                S::storeu(lanes, sums);
                for (int r = 0; r < rows; ++r) c[r * ldc] = beta == T(0) ? lanes[r] : lanes[r] + beta * c[r * ldc];
            }
        }
    }
}

// K = 1, alpha = 1, beta = 0 (a layer fed one feature, or dL/dh from one
// output): C[i, :] = a_i * op(B)[0, :], each element one rounded product,
// exactly what the other forms compute for it.
template <class S>
[[gnu::noinline]] void small_outer(std::int64_t M, std::int64_t N, const typename S::T* A, std::int64_t a_i,
                                   const typename S::T* B, typename S::T* C, std::int64_t ldc) {
    using T = typename S::T;
    using V = typename S::V;
    constexpr int W = S::W;
    if (ldc == N && a_i == 1 && N < W && W % N == 0) {
        // Rows narrower than a vector: W / N rows per vector of the flat C,
        // each lane a[row] * b[column] from a repeated and B tiled.
        const int group = static_cast<int>(N), rows_per_vector = W / group;
        alignas(64) T tiled[W];
        for (int l = 0; l < W; ++l) tiled[l] = B[l % group];
        const V b = S::loadu(tiled);
        const typename S::Index idx = S::repeat_index(group);
        for (std::int64_t i = 0; i < M; i += rows_per_vector) {
            const int rows = static_cast<int>(std::min<std::int64_t>(rows_per_vector, M - i));
            S::storen(C + i * N, S::mul(S::repeat(S::loadn(A + i, rows), idx), b), rows * group);
        }
        return;
    }
    if (N <= 8 * W) {
        // B's row held in registers (at most 8 + 2 of 16 or 32) for every row of C: the loop is stores
        // only, with no reload of B that a store to C could appear to alias.
        const int chunks = static_cast<int>((N + W - 1) / W), tail = static_cast<int>(N - (chunks - 1) * W);
        V b[8];
#pragma GCC unroll 8
        for (int q = 0; q < 8; ++q) b[q] = q < chunks ? S::loadn(B + q * W, q + 1 < chunks ? W : tail) : S::zero();
        for (std::int64_t i = 0; i < M; ++i) {
            const V a = S::set1(A[i * a_i]);
            T* c = C + i * ldc;
#pragma GCC unroll 8
            for (int q = 0; q + 1 < chunks; ++q) S::storeu(c + q * W, S::mul(a, b[q]));
            S::storen(c + (chunks - 1) * W, S::mul(a, b[chunks - 1]), tail);
        }
        return;
    }
    for (std::int64_t i = 0; i < M; ++i) {
        const V a = S::set1(A[i * a_i]);
        typename S::T* c = C + i * ldc;
        std::int64_t j = 0;
        for (; j + W <= N; j += W) S::storeu(c + j, S::mul(a, S::loadu(B + j)));
        if (j < N) {
            const int n = static_cast<int>(N - j);
            S::storen(c + j, S::mul(a, S::loadn(B + j, n)), n);
        }
    }
}

// S: the vector traits of the rows, columns and outer forms; D: those of the
// dot form (a family may take its dot products at a narrower width).
template <class S, class D>
void small_gemm(Trans ta, Trans tb, std::int64_t M, std::int64_t N, std::int64_t K, typename S::T alpha,
                const typename S::T* A, std::int64_t lda, const typename S::T* B, std::int64_t ldb,
                typename S::T beta, typename S::T* C, std::int64_t ldc) {
    using T = typename S::T;
    static_assert(D::W == kReductionLanes<T>, "the reduction forms' lane count is part of the canonical order");
    // Strides of op(A) and op(B) along k and along their other index.
    const std::int64_t a_k = ta == Trans::no ? 1 : lda, a_i = ta == Trans::no ? lda : 1;
    const std::int64_t b_k = tb == Trans::no ? ldb : 1, b_j = tb == Trans::no ? 1 : ldb;
    const bool accumulate = beta != T(0);

    const bool thin = N <= 4;
    alignas(64) T lanes[D::W];
    if (M == 1 && a_k == 1 && b_j == 1 && b_k == N && small_detail::narrow(N, D::W)) {
        // dy^T h in the width sweep: a row of h's column sums weighted by dy.
        small_detail::narrow_column_sums<D>(B, A, K, static_cast<int>(N), lanes);
        for (std::int64_t j = 0; j < N; ++j) small_detail::store_scaled(C + j, lanes[j], alpha, beta);
    } else if (N == 1 && a_i == 1 && a_k == M && b_k == 1 && small_detail::narrow(M, D::W)) {
        // dZ^T x: the column sums of a narrow dZ weighted by x, as a column.
        small_detail::narrow_column_sums<D>(A, B, K, static_cast<int>(M), lanes);
        for (std::int64_t i = 0; i < M; ++i) small_detail::store_scaled(C + i * ldc, lanes[i], alpha, beta);
    } else if (K == 1 && alpha == T(1) && !accumulate && b_j == 1) {
        small_outer<S>(M, N, A, a_i, B, C, ldc);
    } else if (b_j == 1 && !(thin && (a_i == 1 || (a_k == 1 && b_k == 1)))) {
        if (accumulate) small_rows<S, true>(M, N, K, alpha, A, a_i, a_k, B, b_k, beta, C, ldc);
        else small_rows<S, false>(M, N, K, alpha, A, a_i, a_k, B, b_k, beta, C, ldc);
    } else if (a_i == 1) {
        if (accumulate) small_columns<S, true>(M, N, K, alpha, A, a_k, B, b_j, b_k, beta, C, ldc);
        else small_columns<S, false>(M, N, K, alpha, A, a_k, B, b_j, b_k, beta, C, ldc);
    } else if (a_k == 1 && b_k == 1) {
        small_dots<D>(M, N, K, alpha, A, a_i, B, b_j, beta, C, ldc);
    } else {
        for (std::int64_t i = 0; i < M; ++i)
            for (std::int64_t j = 0; j < N; ++j) {
                T sum = 0;
                for (std::int64_t k = 0; k < K; ++k) sum += A[i * a_i + k * a_k] * B[k * b_k + j * b_j];
                small_detail::store_scaled(C + i * ldc + j, sum, alpha, beta);
            }
    }
}

}  // namespace
}  // namespace ffn::gemm
