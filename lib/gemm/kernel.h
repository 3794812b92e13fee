#pragma once
// What a micro-kernel family offers the blocked driver in gemm.cpp. Each ISA
// lives in its own files under kernels/ and is the only code compiled with
// that ISA's flags.
#include <cstdint>

#include "gemm/gemm.h"

namespace ffn::gemm {

// The parts of the canonical arithmetic (gemm.h) that every family shares,
// so that none can pick its own: K is summed in blocks of kBlockK, and the
// small path's wide reductions (dot products along k, narrow column sums)
// run in kReductionLanes lanes, one 256-bit vector, reduced by one pairwise
// tree. 256 bits because that is what an AVX2 machine holds in one register
// and an AVX-512 machine loses little by using (its dot products already ran
// at that width, faster than in 512-bit vectors).
inline constexpr std::int64_t kBlockK = 256;
template <class T>
inline constexpr int kReductionLanes = static_cast<int>(32 / sizeof(T));

// Computes the MR x NR tile AB = sum over kc of a_packed[k] (MR values) times
// b_packed[k] (NR values), then stores C = alpha * AB + beta * C into the
// m x n top-left part of the tile (m <= MR, n <= NR). beta == 0 never reads C.
// The two products are rounded separately, then added (no fused multiply-add
// in the epilogue), so full and partial tiles round alike.
template <class T>
using MicroKernel = void (*)(std::int64_t kc, const T* a_packed, const T* b_packed, T* c, std::int64_t ldc,
                             std::int64_t m, std::int64_t n, T alpha, T beta);

// The unpacked path for small or degenerate shapes (kernels/small_gemm.h).
template <class T>
using SmallGemm = void (*)(Trans ta, Trans tb, std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A,
                           std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc);

// Packs one MR-row sliver of a row-major A (rows <= MR rows of kc values
// from `a`, stride lda) k-major into dst, zero-filling rows past `rows`. May
// write up to 16 elements past the sliver's end (the buffer has room). dst,
// like every packing buffer of the driver, is 64-byte aligned.
template <class T>
using PackRows = void (*)(const T* a, std::int64_t lda, std::int64_t rows, std::int64_t kc, T* dst);

// Packs kc rows x nc columns of a row-major B (stride ldb) into NR-column
// slivers, each k-major (NR values per k, kc * NR apart), zero-filling the
// columns of the last sliver past nc. dst is 64-byte aligned.
template <class T>
using PackB = void (*)(const T* b, std::int64_t ldb, std::int64_t kc, std::int64_t nc, T* dst);

// Bias and pointwise op of an epilogue on an m x n block of C at (i0, j0),
// bitwise equal to the portable loop in gemm.cpp (kernels/finish.h).
template <class T>
using Finish = void (*)(const Epilogue<T>& ep, T* C, std::int64_t ldc, std::int64_t i0, std::int64_t j0,
                        std::int64_t m, std::int64_t n);

template <class T>
struct KernelShape {
    MicroKernel<T> kernel = nullptr;
    SmallGemm<T> small = nullptr;
    std::int64_t MR = 0, NR = 0;  // register tile
    std::int64_t MC = 0, NC = 0;  // cache blocks (KC is kBlockK; see each kernel file for the reasoning)
    // Columns of the packed B panel that one pass over the A block uses: a
    // sub-panel that stays in L2 while each A sliver stays in L1 (a multiple
    // of NR; NR itself gives Goto's order, a B sliver held in L1).
    std::int64_t NC_L2 = 0;
    PackRows<T> pack_rows = nullptr;       // null: the portable packing in gemm.cpp
    // The same for A stored transposed (K x M): `a` points at the sliver's
    // first column, each k's MR values are contiguous, stride lda between k.
    // The driver packs a few k at a time into the middle of a sliver, so this
    // one must write nothing past dst + kc * MR.
    PackRows<T> pack_cols = nullptr;
    Finish<T> finish = nullptr;  // null: the portable loop in gemm.cpp
    PackB<T> pack_b = nullptr;   // null: the portable packing in gemm.cpp
    // The same slivers of a B stored transposed (N x K, op(B) = B^T): `b`
    // points at the first column's row, each column's kc values contiguous,
    // ldb apart. A transpose in registers; the portable loop gathers one
    // value at a time, a fifth of a toy-model step at n = 400.
    PackB<T> pack_bt = nullptr;
    // The kernel for a sliver with only m < MR rows, which need not compute
    // the padding rows (null, or nullptr returned: `kernel`).
    MicroKernel<T> (*kernel_for_rows)(std::int64_t m) = nullptr;
};

struct KernelFamily {
    // Runs `iterations` rounds of independent float FMAs in registers (no
    // memory traffic) and returns the flops done: the machine's FMA peak for
    // this ISA, measured by `ffn-lab bench`.
    double (*fma_loop)(std::int64_t iterations);
    KernelShape<float> f32;
    KernelShape<double> f64;
};

// Defined in kernels/<isa>/; each returns its family's entry of the
// dispatch table (dispatch.cpp), run only where core/isa.h says the CPU can.
KernelFamily ref_family();
KernelFamily avx2_family();
KernelFamily avx512_family();

}  // namespace ffn::gemm
