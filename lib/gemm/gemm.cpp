// The blocked driver of the Goto/BLIS algorithm. No intrinsics here: the
// per-ISA micro-kernels come through dispatch.h. Two loop orders, the same
// sums in the same order (gemm.h), chosen by the size of C:
//
// C up to 4 MiB (it waits in L3 between the K blocks):
//   for jc in N by NC:                  B panel KC x NC      -> L3
//     for pc in K by KC:                pack B panel
//       for ic in M by MC:              pack A block MC x KC -> L2 (transposed: 4 blocks per pack)
//         for jb in NC by NC_L2:        B sub-panel KC x NC_L2 -> L2
//           for ir in MC by MR:         A sliver MR x KC     -> L1
//             for jr in NC_L2 by NR:    micro-kernel on an MR x NR tile of C
//
// A larger C would come back from DRAM once per K block (a 12 x 32 tile
// read and written once per 196 kflop), which cost 10-25% of the FFN
// products' speed. There every K block of one MC x NC_L2 stretch of C runs
// before the next stretch, so the stretch stays in L2:
//   for jc in N by NC:                  pack B for all of K (NC shrinks past 16 MiB)
//     for ic in M by MC:
//       for jb in NC by NC_L2:
//         for pc in K by KC:            pack A block MC x KC on first use
//           for ir, jr:                 as above
//
// Goto's order walks jr outside ir, so a KC x NR sliver of B is what L1
// should hold; at our KC it does not fit, and A and B then both stream from
// L2. Here the small A sliver stays in L1 across a row of tiles while B
// streams from an L2-sized sub-panel (see "Cache blocks" in the kernel files).
//
// Threads each take one band of C (rows or columns, see choose_split) and run
// the whole loop nest on it with their own packed copies. The K loop is never
// split, so every element of C is summed in the same order for any thread
// count.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "core/thread_pool.h"
#include "gemm/dispatch.h"

namespace ffn::gemm {

namespace {

// ---------------------------------------------------------------------------
// Threads

std::atomic<std::size_t> g_max_threads{0};  // 0: not set, use the hardware's
std::mutex g_pool_mutex;
std::unique_ptr<ThreadPool> g_pool;

ThreadPool& pool_for(std::size_t threads) {
    std::lock_guard lock(g_pool_mutex);
    if (!g_pool || g_pool->size() != threads) g_pool = std::make_unique<ThreadPool>(threads);
    return *g_pool;
}

// Shapes where packing a register tile costs more than it saves: little work
// in all, or a dimension so thin that most of each padded tile is waste.
bool is_small(std::int64_t M, std::int64_t N, std::int64_t K) {
    return static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K) <= 32768.0 || N <= 4 || K <= 4 ||
           M <= 2;
}

// Elements of C per band when the small path runs an epilogue (16 KiB of
// floats: a third of L1d, leaving room for the operands).
constexpr std::int64_t kSmallBandElements = 4096;

// Below about a million multiply-adds (some 10 us on one core) waking a
// second thread costs more than it saves. Above it a late worker costs little:
// the caller takes the other band itself when it gets there first.
constexpr double kParallelMinMacs = 1 << 20;

// ---------------------------------------------------------------------------
// Packing buffers: 64-byte aligned, grown on demand, one set per thread and
// kept between calls so a training step allocates nothing.

struct AlignedBuffer {
    void* data = nullptr;
    std::size_t bytes = 0;
    ~AlignedBuffer() { std::free(data); }
    template <class T>
    T* get(std::size_t count) {
        const std::size_t need = (count * sizeof(T) + 63) / 64 * 64;
        if (need > bytes) {
            std::free(std::exchange(data, nullptr));
            bytes = 0;
            constexpr std::size_t kHuge = std::size_t{2} << 20;
            const bool huge = need >= kHuge / 2;
            const std::size_t size = huge ? (need + kHuge - 1) / kHuge * kHuge : need;
            data = std::aligned_alloc(huge ? kHuge : 64, size);
            if (!data) throw std::bad_alloc();
#if defined(__linux__)
            // Debian's default THP mode is madvise: ask for 2 MiB pages, so the
            // kernel's walk over an 8 MiB packed B panel does not miss the TLB
            // every 4 KiB. A refusal only costs speed.
            if (huge) ::madvise(data, size, MADV_HUGEPAGE);
#endif
            bytes = size;
        }
        return static_cast<T*>(data);
    }
};

thread_local AlignedBuffer t_pack_a, t_pack_b;

// ---------------------------------------------------------------------------
// Packing. op(A) rows i0..i0+mc, columns p0..p0+kc into MR-row slivers, each
// stored k-major (MR values per k), the last sliver zero-padded.

template <class T>
void pack_a(Trans ta, const T* A, std::int64_t lda, std::int64_t i0, std::int64_t p0, std::int64_t mc,
            std::int64_t kc, std::int64_t MR, PackRows<T> pack_rows, PackRows<T> pack_cols, T* dst) {
    if (ta == Trans::yes && pack_cols) {
        // A stored K x M: one sliver at a time would stride down kc rows of A
        // (a new page each when M is large) for MR values apiece. A few rows
        // at a time across all slivers reads A row by row instead, and each
        // sliver's part of the next pass is prefetched as it is packed: the
        // runs are only mc values long, too short for the hardware's stream
        // prefetcher (in 2048x4096x512:t, A 32 MiB from DRAM, this took
        // packing from a median 7.7% of the call to 5.7%). The driver hands
        // over several MC blocks at once for the same reason; with runs that
        // long, 4 rows per pass beat 8 and 16 (a microbenchmark packing from
        // DRAM: 25 GB/s at 576 columns and 4 rows, 12 at 144 and 16).
        constexpr std::int64_t kRowsPerPass = 4;
        for (std::int64_t k0 = 0; k0 < kc; k0 += kRowsPerPass) {
            const std::int64_t kk = std::min(kRowsPerPass, kc - k0);
            const std::int64_t next = std::min(kRowsPerPass, kc - k0 - kk);
            for (std::int64_t s = 0; s < mc; s += MR) {
                const std::int64_t rows = std::min(MR, mc - s);
                const T* sliver = A + (p0 + k0) * lda + i0 + s;
                for (std::int64_t k = kk; k < kk + next; ++k) {
                    __builtin_prefetch(sliver + k * lda, 0, 3);
                    __builtin_prefetch(sliver + k * lda + rows - 1, 0, 3);
                }
                pack_cols(sliver, lda, rows, kk, dst + s * kc + k0 * MR);
            }
        }
        return;
    }
    for (std::int64_t s = 0; s < mc; s += MR) {
        const std::int64_t rows = std::min(MR, mc - s);
        if (ta == Trans::no && pack_rows) {
            pack_rows(A + (i0 + s) * lda + p0, lda, rows, kc, dst);
        } else if (ta == Trans::no) {
            for (std::int64_t k = 0; k < kc; ++k) {
                T* d = dst + k * MR;
                for (std::int64_t r = 0; r < rows; ++r) d[r] = A[(i0 + s + r) * lda + p0 + k];
                for (std::int64_t r = rows; r < MR; ++r) d[r] = T(0);
            }
        } else {
            // A stored K x M: each k gives MR contiguous values.
            for (std::int64_t k = 0; k < kc; ++k) {
                const T* src = A + (p0 + k) * lda + i0 + s;
                T* d = dst + k * MR;
                for (std::int64_t r = 0; r < rows; ++r) d[r] = src[r];
                for (std::int64_t r = rows; r < MR; ++r) d[r] = T(0);
            }
        }
        dst += MR * kc;
    }
}

// op(B) rows p0..p0+kc, columns j0..j0+nc into NR-column slivers, k-major.
template <class T>
void pack_b(Trans tb, const T* B, std::int64_t ldb, std::int64_t p0, std::int64_t j0, std::int64_t nc,
            std::int64_t kc, std::int64_t NR, PackB<T> pack_rows, PackB<T> pack_transposed, T* dst) {
    if (tb == Trans::no && pack_rows) return pack_rows(B + p0 * ldb + j0, ldb, kc, nc, dst);
    if (tb == Trans::yes && pack_transposed) return pack_transposed(B + j0 * ldb + p0, ldb, kc, nc, dst);
    if (tb == Trans::no) {
        // Row by row of B, so the reads are sequential (sliver by sliver would
        // stride down kc rows of B, a new page each when N is large).
        const std::int64_t full = nc / NR * NR;
        for (std::int64_t k = 0; k < kc; ++k) {
            const T* src = B + (p0 + k) * ldb + j0;
            for (std::int64_t s = 0; s < full; s += NR) std::copy_n(src + s, NR, dst + s * kc + k * NR);
            if (full < nc) {
                T* d = std::copy_n(src + full, nc - full, dst + full * kc + k * NR);
                std::fill(d, d + (NR - (nc - full)), T(0));
            }
        }
        return;
    }
    for (std::int64_t s = 0; s < nc; s += NR) {
        const std::int64_t cols = std::min(NR, nc - s);
        for (std::int64_t k = 0; k < kc; ++k) {
            T* d = dst + s * kc + k * NR;
            for (std::int64_t c = 0; c < cols; ++c) d[c] = B[(j0 + s + c) * ldb + p0 + k];
            for (std::int64_t c = cols; c < NR; ++c) d[c] = T(0);
        }
    }
}

// ---------------------------------------------------------------------------

// The epilogue on an m x n block of C at (i0, j0): bias and pointwise op by
// the family's SIMD finish when it has one, else by the loops below (which
// define the results: finish must match them bitwise), then rowwise.
template <class T>
void apply_epilogue(const KernelShape<T>& ks, const Epilogue<T>& ep, T* C, std::int64_t ldc, std::int64_t i0,
                    std::int64_t j0, std::int64_t m, std::int64_t n) {
    if (ks.finish) {
        ks.finish(ep, C, ldc, i0, j0, m, n);
    } else if (ep.bias || ep.pointwise != Pointwise::none) {
        for (std::int64_t i = i0; i < i0 + m; ++i) {
            T* row = C + i * ldc + j0;
            const T* aux = ep.pointwise == Pointwise::relu_grad ? ep.aux + i * ep.ld_aux + j0 : nullptr;
            for (std::int64_t j = 0; j < n; ++j) {
                T v = ep.bias ? row[j] + ep.bias[j0 + j] : row[j];
                if (ep.pointwise == Pointwise::relu) v = v > T(0) ? v : T(0);
                if (ep.pointwise == Pointwise::relu_grad) v = aux[j] > T(0) ? v : T(0);
                row[j] = v;
            }
        }
    }
    if (!ep.rowwise) return;
    // Whole rows of a contiguous C go as one segment: one call, not m.
    if (j0 == 0 && n == ldc) return ep.rowwise(C + i0 * ldc, i0, 0, m * n, ep.context);
    for (std::int64_t i = i0; i < i0 + m; ++i) ep.rowwise(C + i * ldc + j0, i, j0, n, ep.context);
}

// C = beta * C (+ epilogue): the whole product when K == 0 or alpha == 0.
template <class T>
void scale_only(const KernelShape<T>& ks, std::int64_t M, std::int64_t N, T beta, T* C, std::int64_t ldc,
                const Epilogue<T>& ep) {
    for (std::int64_t i = 0; i < M; ++i)
        for (std::int64_t j = 0; j < N; ++j) C[i * ldc + j] = beta == T(0) ? T(0) : beta * C[i * ldc + j];
    if (!ep.empty()) apply_epilogue(ks, ep, C, ldc, 0, 0, M, N);
}

template <class T>
const KernelShape<T>& shape_of(const KernelFamily& f);
template <>
const KernelShape<float>& shape_of<float>(const KernelFamily& f) {
    return f.f32;
}
template <>
const KernelShape<double>& shape_of<double>(const KernelFamily& f) {
    return f.f64;
}

// Everything one gemm call shares between the threads that split it.
template <class T>
struct Operands {
    Trans ta, tb;
    std::int64_t K;
    T alpha;
    const T* A;
    std::int64_t lda;
    const T* B;
    std::int64_t ldb;
    T beta;
    T* C;
    std::int64_t ldc;
    const Epilogue<T>* ep;
    const KernelShape<T>* ks;
};

// Rows [i0, i1) and columns [j0, j1) of C.
struct Region {
    std::int64_t i0, i1, j0, j1;
};

// The kernel touches its tile of C only after the k loop; asking for those
// lines first lets them arrive while it runs instead of stalling at the end.
// (Done here, not in the kernel: there the addresses cost registers the
// accumulators need.)
template <class T>
void prefetch_tile(const T* c, std::int64_t ldc, std::int64_t m, std::int64_t n) {
    for (std::int64_t i = 0; i < m; ++i) {
        __builtin_prefetch(c + i * ldc, 1, 3);
        __builtin_prefetch(c + i * ldc + n - 1, 1, 3);
    }
}

constexpr std::int64_t kTransposedBlocksPerPack = 4;

// Up to this size C stays in L3 while the K blocks pass over it in Goto's
// order (below); past it each block would read C back from DRAM.
constexpr std::size_t kNearC = std::size_t{4} << 20;

// The packed B panel of the far-C order holds all of K for NC columns; past
// this many bytes NC shrinks (to a multiple of NC_L2), so a long K does not
// ask for a panel of 64 MiB.
constexpr std::int64_t kPanelBytes = std::int64_t{16} << 20;

// The whole blocked algorithm on one region of C, packing its own A and B:
// the threads of one call never wait for each other.
template <class T>
void multiply_region(const Operands<T>& op, const Region& r) {
    const KernelShape<T>& ks = *op.ks;
    const std::int64_t MR = ks.MR, NR = ks.NR, KC = kBlockK, NC_L2 = ks.NC_L2, K = op.K;
    const std::int64_t MC = std::max(MR, ks.MC / MR * MR);  // whole slivers, so packed blocks line up
    // A transposed A is packed several MC blocks at a time, in longer runs of
    // each row (see pack_a); the kernels still take one block at a time.
    const std::int64_t rows_per_pack = op.ta == Trans::yes ? kTransposedBlocksPerPack * MC : MC;
    const auto pack_a_rows = [&](std::int64_t ic, std::int64_t pc, std::int64_t kc, T* dst) {
        pack_a(op.ta, op.A, op.lda, ic, pc, std::min(rows_per_pack, r.i1 - ic), kc, MR, ks.pack_rows, ks.pack_cols,
               dst);
    };
    // The MR x NR tiles of C in rows [ic, ic + mc) and columns [jc + jb, jc
    // + jb + nb) for the K block [pc, pc + kc), from its packed A block and B
    // panel.
    const auto tiles = [&](const T* a_block, const T* b_panel, std::int64_t ic, std::int64_t mc, std::int64_t jc,
                           std::int64_t nc, std::int64_t jb, std::int64_t nb, std::int64_t pc, std::int64_t kc) {
        const T beta_here = pc == 0 ? op.beta : T(1);
        const bool epilogue_here = pc + kc == K && !op.ep->empty();
        for (std::int64_t ir = 0; ir < mc; ir += MR) {
            const std::int64_t m = std::min(MR, mc - ir);
            MicroKernel<T> kernel = ks.kernel;
            if (m < MR && ks.kernel_for_rows)
                if (MicroKernel<T> k = ks.kernel_for_rows(m)) kernel = k;
            for (std::int64_t jr = jb; jr < jb + nb; jr += NR) {
                const std::int64_t n = std::min(NR, nc - jr);
                T* c = op.C + (ic + ir) * op.ldc + jc + jr;
                prefetch_tile(c, op.ldc, m, n);
                kernel(kc, a_block + ir * kc, b_panel + jr * kc, c, op.ldc, m, n, op.alpha, beta_here);
            }
            // On the row of tiles just finished, still in L1 or L2: rows of nb
            // values to a row hook rather than of NR, so a hook's loop runs
            // long enough to pay for its call.
            if (epilogue_here) apply_epilogue(ks, *op.ep, op.C, op.ldc, ic + ir, jc + jb, m, nb);
        }
    };
    const auto whole = [](std::int64_t n, std::int64_t unit) { return (n + unit - 1) / unit * unit; };
    // The far-C order's B panel: all of K for NC columns, NC shrunk past
    // kPanelBytes to a multiple of NC_L2.
    const std::int64_t NC_far =
        std::clamp(kPanelBytes / (K * static_cast<std::int64_t>(sizeof(T))) / NC_L2 * NC_L2, NC_L2, ks.NC);
    const auto bytes = [](std::int64_t rows, std::int64_t cols) {
        return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols) * sizeof(T);
    };
    const std::size_t c_bytes = bytes(r.i1 - r.i0, r.j1 - r.j0);

    // Goto's order reads C back once per K block, the far-C order its B
    // panel once per MC block: about the same bytes, so the order keeps in
    // cache the one that fits there.
    // Nor where K is so long that its packs would pass kPanelBytes even at
    // their narrowest (NC_L2 columns of B, one A group): Goto's order packs
    // one K block at a time.
    if (c_bytes <= kNearC || c_bytes <= bytes(K, std::min(NC_far, r.j1 - r.j0)) ||
        bytes(K, std::max(NC_L2, whole(rows_per_pack, MR))) > static_cast<std::size_t>(kPanelBytes)) {
        // Goto's order: each K block's B panel is packed once and serves every
        // MC block of A from L2, while C waits in L3 for the next K block.
        T* packed_a = nullptr;
        for (std::int64_t jc = r.j0; jc < r.j1; jc += ks.NC) {
            const std::int64_t nc = std::min(ks.NC, r.j1 - jc);
            for (std::int64_t pc = 0; pc < K; pc += KC) {
                const std::int64_t kc = std::min(KC, K - pc);
                T* packed_b = t_pack_b.get<T>(static_cast<std::size_t>(whole(nc, NR) * kc));
                pack_b(op.tb, op.B, op.ldb, pc, jc, nc, kc, NR, ks.pack_b, ks.pack_bt, packed_b);
                for (std::int64_t ic = r.i0; ic < r.i1; ic += MC) {
                    const std::int64_t packed_row = (ic - r.i0) % rows_per_pack;
                    if (packed_row == 0) {
                        // + 16: room for a vectorised packer's overhanging last store.
                        packed_a = t_pack_a.get<T>(static_cast<std::size_t>(whole(rows_per_pack, MR) * kc + 16));
                        pack_a_rows(ic, pc, kc, packed_a);
                    }
                    for (std::int64_t jb = 0; jb < nc; jb += NC_L2)
                        tiles(packed_a + packed_row * kc, packed_b, ic, std::min(MC, r.i1 - ic), jc, nc, jb,
                              std::min(NC_L2, nc - jb), pc, kc);
                }
            }
        }
        return;
    }

    // A C too large for L3 and larger than B's panel: all K blocks for one
    // MC x NC_L2 stretch of C before the next, so that stretch stays in L2
    // between the blocks instead of coming back from DRAM once per block
    // (the same sums in the same order, gemm.h). B is packed for all of K at
    // once, and each MC block reads its K blocks of it back.
    T* packed_a = nullptr;
    std::int64_t packed_rows = 0;  // rows of the current A pack, in whole slivers
    for (std::int64_t jc = r.j0; jc < r.j1; jc += NC_far) {
        const std::int64_t nc = std::min(NC_far, r.j1 - jc), nc_slivers = whole(nc, NR);
        // K block pc starts at pc * nc_slivers, as if every block were KC deep.
        T* packed_b = t_pack_b.get<T>(static_cast<std::size_t>(nc_slivers * K));
        for (std::int64_t pc = 0; pc < K; pc += KC)
            pack_b(op.tb, op.B, op.ldb, pc, jc, nc, std::min(KC, K - pc), NR, ks.pack_b, ks.pack_bt, packed_b + pc * nc_slivers);
        for (std::int64_t ic = r.i0; ic < r.i1; ic += MC) {
            const std::int64_t packed_row = (ic - r.i0) % rows_per_pack;
            if (packed_row == 0) {
                packed_rows = whole(std::min(rows_per_pack, r.i1 - ic), MR);
                // + 16: room for a vectorised packer's overhanging last store
                // (into the next K block, packed after it, or past the end).
                packed_a = t_pack_a.get<T>(static_cast<std::size_t>(packed_rows * K + 16));
            }
            for (std::int64_t jb = 0; jb < nc; jb += NC_L2) {
                for (std::int64_t pc = 0; pc < K; pc += KC) {
                    const std::int64_t kc = std::min(KC, K - pc);
                    T* a_pack = packed_a + pc * packed_rows;
                    if (jb == 0 && packed_row == 0) pack_a_rows(ic, pc, kc, a_pack);  // just before its first use
                    tiles(a_pack + packed_row * kc, packed_b + pc * nc_slivers, ic, std::min(MC, r.i1 - ic), jc, nc,
                          jb, std::min(NC_L2, nc - jb), pc, kc);
                }
            }
        }
    }
}

// How a multi-threaded call divides C: into bands of whole register tiles,
// across rows (units of MR; each thread then packs all of B) or columns
// (units of NR; each thread packs all of A). The choice minimises the busiest
// thread's multiply-adds plus what its duplicated packing costs.
struct Split {
    bool by_rows;
    std::int64_t units;
};

// A packed element is read from memory (often DRAM for the big operand) and
// written once: about what 8 multiply-adds cost at 32 a cycle. Rough, but it
// only has to separate a 1% imbalance from repacking a 32 MiB operand twice.
constexpr double kPackCostInMacs = 8;

inline Split choose_split(std::int64_t M, std::int64_t N, std::int64_t K, std::int64_t MR, std::int64_t NR,
                          std::size_t threads) {
    const auto parts = static_cast<std::int64_t>(threads);
    const std::int64_t row_units = (M + MR - 1) / MR, col_units = (N + NR - 1) / NR;
    const double m = static_cast<double>(M), n = static_cast<double>(N), k = static_cast<double>(K);
    // The busiest thread's share of the rows or columns.
    auto busiest = [&](std::int64_t units, std::int64_t unit, std::int64_t extent) {
        return static_cast<double>(std::min(extent, (units + parts - 1) / parts * unit)) / static_cast<double>(extent);
    };
    const double by_rows = busiest(row_units, MR, M) * m * n * k + kPackCostInMacs * k * n;
    const double by_cols = busiest(col_units, NR, N) * m * n * k + kPackCostInMacs * k * m;
    if (by_rows <= by_cols) return {true, row_units};
    return {false, col_units};
}

}  // namespace

template <class T>
void gemm(Trans ta, Trans tb, std::int64_t M, std::int64_t N, std::int64_t K, T alpha, const T* A, std::int64_t lda,
          const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc, const Epilogue<T>& ep) {
    if (M < 0 || N < 0 || K < 0) throw std::invalid_argument("gemm: negative dimension");
    if (M == 0 || N == 0) return;
    const KernelShape<T>& ks = shape_of<T>(active_family());
    if (K == 0 || alpha == T(0)) return scale_only(ks, M, N, beta, C, ldc, ep);
    if (is_small(M, N, K)) {
        if (ep.empty()) return ks.small(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        // A band of rows at a time, its epilogue run while the band is still
        // in L1. Every small form computes each element of C from its own row
        // and column alone, so banding changes no result.
        const std::int64_t band = std::max<std::int64_t>(16, kSmallBandElements / N / 16 * 16);
        for (std::int64_t i0 = 0; i0 < M; i0 += band) {
            const std::int64_t m = std::min(band, M - i0);
            ks.small(ta, tb, m, N, K, alpha, ta == Trans::no ? A + i0 * lda : A + i0, lda, B, ldb, beta,
                     C + i0 * ldc, ldc);
            apply_epilogue(ks, ep, C, ldc, i0, 0, m, N);
        }
        return;
    }
    const double macs = static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
    const std::size_t threads = (ThreadPool::in_task() || macs < kParallelMinMacs) ? 1 : max_threads();
    const Operands<T> op{ta, tb, K, alpha, A, lda, B, ldb, beta, C, ldc, &ep, &ks};
    if (threads == 1) return multiply_region(op, {0, M, 0, N});

    const Split split = choose_split(M, N, K, ks.MR, ks.NR, threads);
    pool_for(threads).parallel_for(threads, [&](std::size_t t) {
        const auto ti = static_cast<std::int64_t>(t), parts = static_cast<std::int64_t>(threads);
        Region r{0, M, 0, N};
        if (split.by_rows) {
            r.i0 = std::min(M, split.units * ti / parts * ks.MR);
            r.i1 = std::min(M, split.units * (ti + 1) / parts * ks.MR);
        } else {
            r.j0 = std::min(N, split.units * ti / parts * ks.NR);
            r.j1 = std::min(N, split.units * (ti + 1) / parts * ks.NR);
        }
        if (r.i1 > r.i0 && r.j1 > r.j0) multiply_region(op, r);
    });
}

void set_max_threads(std::size_t threads) { g_max_threads.store(threads); }

void parallel_ranges(std::size_t n, std::size_t min_parallel, const std::function<void(std::size_t, std::size_t)>& body) {
    const std::size_t threads = (ThreadPool::in_task() || n < min_parallel) ? 1 : max_threads();
    if (threads <= 1 || n < 2) {
        if (n > 0) body(0, n);
        return;
    }
    const std::size_t parts = std::min(threads, n);  // gemm's own pool: a pool of another size would be rebuilt
    pool_for(threads).parallel_for(parts, [&](std::size_t t) { body(n * t / parts, n * (t + 1) / parts); });
}

std::size_t max_threads() {
    const std::size_t n = g_max_threads.load();
    return n == 0 ? ThreadPool::hardware_threads() : n;
}

namespace {
// An instance's rowwise hook sees rows numbered across the stack.
template <class T>
struct OffsetRows {
    const Epilogue<T>* outer;
    std::int64_t first_row;
};
template <class T>
void offset_rows(T* row, std::int64_t i, std::int64_t j0, std::int64_t n, void* context) {
    const auto* c = static_cast<const OffsetRows<T>*>(context);
    c->outer->rowwise(row, c->first_row + i, j0, n, c->outer->context);
}
}  // namespace

template <class T>
void gemm_batched(std::int64_t count, Trans ta, Trans tb, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
                  const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc,
                  const Strides& st, const Epilogue<T>& ep) {
    if (count < 0) throw std::invalid_argument("gemm_batched: negative count");
    if (count == 1) return gemm<T>(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, ep);  // no hook to renumber
    auto one = [&](std::int64_t i) {
        OffsetRows<T> rows{&ep, i * M};
        Epilogue<T> mine = ep;
        if (ep.bias) mine.bias = ep.bias + i * st.bias;
        if (ep.aux) mine.aux = ep.aux + i * st.aux;
        if (ep.rowwise) {
            mine.rowwise = offset_rows<T>;
            mine.context = &rows;
        }
        gemm<T>(ta, tb, M, N, K, alpha, A + i * st.a, lda, B + i * st.b, ldb, beta, C + i * st.c, ldc, mine);
    };
    const std::size_t threads = ThreadPool::in_task() ? 1 : max_threads();
    if (threads <= 1 || count < static_cast<std::int64_t>(threads)) {
        for (std::int64_t i = 0; i < count; ++i) one(i);  // each product may use every thread itself
        return;
    }
    // One instance per task: a gemm inside a task runs on that thread alone.
    pool_for(threads).parallel_for(static_cast<std::size_t>(count), [&](std::size_t i) { one(static_cast<std::int64_t>(i)); });
}

template void gemm_batched<float>(std::int64_t, Trans, Trans, std::int64_t, std::int64_t, std::int64_t, float,
                                  const float*, std::int64_t, const float*, std::int64_t, float, float*, std::int64_t,
                                  const Strides&, const Epilogue<float>&);
template void gemm_batched<double>(std::int64_t, Trans, Trans, std::int64_t, std::int64_t, std::int64_t, double,
                                   const double*, std::int64_t, const double*, std::int64_t, double, double*,
                                   std::int64_t, const Strides&, const Epilogue<double>&);

template void gemm<float>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, float, const float*, std::int64_t,
                          const float*, std::int64_t, float, float*, std::int64_t, const Epilogue<float>&);
template void gemm<double>(Trans, Trans, std::int64_t, std::int64_t, std::int64_t, double, const double*,
                           std::int64_t, const double*, std::int64_t, double, double*, std::int64_t,
                           const Epilogue<double>&);

}  // namespace ffn::gemm
