#pragma once
// Packing of a row-major B into NR-column slivers (NR = 2 vectors), k-major,
// for the families' KernelShape::pack_b. Like tile_kernel.h it holds no
// intrinsics: the traits type S supplies them.
//
// B is read two rows at a time, so each sliver gets 2 x NR contiguous values
// per visit. Measured packing a 4096 x 2048 float B from DRAM into 512-row
// panels (AVX-512): one row at a time 16-17 GB/s, two 22-23, four 12-18;
// the portable loop (a memcpy per NR values) 14-16. The next two rows are
// prefetched as each pair is copied: in a 512x4096x2048 product (B 32 MiB,
// from DRAM) that took packing from a median 6.0% of the call to 4.3%.
#include <algorithm>
#include <cstdint>

namespace ffn::gemm {
// Internal linkage on purpose: see tile_kernel.h.
namespace {

// kernel.h's pack_bt, for NR = 2 vectors: each half of a sliver is W rows
// of B, read W values at a time and turned by `transpose` (the family's
// W x W register transpose: r[c] becomes column c of the block whose row i
// was r[i]) into W k of the sliver. A value at a time instead cost a
// fifth of the products with a transposed B in the toy models' training.
template <class S, void (*transpose)(typename S::V*)>
void pack_bt(const typename S::T* b, std::int64_t ldb, std::int64_t kc, std::int64_t nc, typename S::T* dst) {
    constexpr int W = S::W, NR = 2 * W;
    typename S::V r[W];
    for (std::int64_t s = 0; s < nc; s += NR)
        for (int half = 0; half < 2; ++half) {
            const std::int64_t j0 = s + half * W;
            const std::int64_t rows = std::clamp<std::int64_t>(nc - j0, 0, W);
            for (std::int64_t k0 = 0; k0 < kc; k0 += W) {
                const int cols = static_cast<int>(std::min<std::int64_t>(W, kc - k0));
                for (int i = 0; i < W; ++i) r[i] = i < rows ? S::loadn(b + (j0 + i) * ldb + k0, cols) : S::zero();
                transpose(r);
                for (int c = 0; c < cols; ++c) S::store(dst + s * kc + (k0 + c) * NR + half * W, r[c]);
            }
        }
}

template <class S>
void pack_b_rows(const typename S::T* b, std::int64_t ldb, std::int64_t kc, std::int64_t nc, typename S::T* dst) {
    using V = typename S::V;
    constexpr int W = S::W, NR = 2 * W;
    const std::int64_t full = nc / NR * NR;
    const int tail = static_cast<int>(nc - full);
    auto sliver = [&](std::int64_t s, std::int64_t k) { return dst + s * kc + k * NR; };
    std::int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        const typename S::T* r0 = b + k * ldb;
        const typename S::T* r1 = r0 + ldb;
        const bool ahead = k + 3 < kc;
        for (std::int64_t s = 0; s < full; s += NR) {
            if (ahead) {
                __builtin_prefetch(r1 + ldb + s, 0, 3);
                __builtin_prefetch(r1 + ldb + s + W, 0, 3);
                __builtin_prefetch(r1 + 2 * ldb + s, 0, 3);
                __builtin_prefetch(r1 + 2 * ldb + s + W, 0, 3);
            }
            const V a0 = S::loadu(r0 + s), a1 = S::loadu(r0 + s + W);
            const V b0 = S::loadu(r1 + s), b1 = S::loadu(r1 + s + W);
            typename S::T* d = sliver(s, k);
            S::store(d, a0);
            S::store(d + W, a1);
            S::store(d + NR, b0);
            S::store(d + NR + W, b1);
        }
    }
    for (; k < kc; ++k) {
        const typename S::T* r0 = b + k * ldb;
        for (std::int64_t s = 0; s < full; s += NR) {
            S::store(sliver(s, k), S::loadu(r0 + s));
            S::store(sliver(s, k) + W, S::loadu(r0 + s + W));
        }
    }
    if (tail == 0) return;
    // The last, partial sliver: the missing columns are zeros.
    for (k = 0; k < kc; ++k) {
        const typename S::T* r = b + k * ldb + full;
        S::store(sliver(full, k), S::loadn(r, tail < W ? tail : W));
        S::store(sliver(full, k) + W, tail > W ? S::loadn(r + W, tail - W) : S::zero());
    }
}

}  // namespace
}  // namespace ffn::gemm
