#pragma once
// The one matrix-product entry point of ffn-lab. Every product in the library
// goes through here, so the kernel behind it can change without callers
// noticing.
//
// C = alpha * op(A) * op(B) + beta * C, all row-major; op(X) = X or X^T.
// op(A) is M x K, op(B) is K x N, C is M x N. lda/ldb/ldc are row strides in
// elements of the matrices as stored. BLAS semantics: beta == 0 never reads C
// (NaNs already in C do not leak); K == 0 or alpha == 0 gives beta * C.
//
// Results are bitwise identical for any thread count and any kernel family
// (ref, avx2, avx512), so a table computed on one CPU is the table of every
// CPU. Each element of C is computed in one canonical order, chosen from the
// shape and strides alone:
//  - the packed path (large shapes): k in blocks of kBlockK = 256; in each
//    block one chain of fused multiply-adds in increasing k from zero; then
//    C = alpha * block_sum + beta * C (beta = 1 after the first block), the
//    two products rounded separately and then added;
//  - the small path (small or thin shapes): one of a few forms with a fixed
//    order each (kernels/small_gemm.h), its reductions in a fixed lane count
//    and pairwise tree.
// The reference family runs the same templates in scalar code with std::fma;
// the build forbids the compiler from fusing anything else
// (-ffp-contract=off).
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "core/isa.h"

namespace ffn::gemm {

enum class Trans : bool { no = false, yes = true };

// Pointwise ops the kernels apply themselves, in SIMD, while a block of C is
// still in cache (the ones whose whole cost is the pass over memory):
//   relu:      C = C > 0 ? C : 0
//   relu_grad: C = aux > 0 ? C : 0, with aux an M x N matrix (row stride
//              ld_aux): ReLU's backward, aux its output or pre-activation.
enum class Pointwise : unsigned char { none, relu, relu_grad };

// Work applied to each finished block of C while it is still in cache, in
// this order: `bias[j]` is added to column j (when bias is set); the
// pointwise op; then `rowwise(row, i, j0, n, context)` may transform the n
// values row[0..n) of row i starting at column j0 (an activation without a
// built-in op, a copy of the pre-activation...). Each element is visited
// exactly once, after its sum is complete. When C is contiguous (ldc == N),
// several whole rows may come to rowwise as one segment starting at (i, 0),
// so a context must index its own arrays as i * N + j0 + offset.
template <class T>
struct Epilogue {
    const T* bias = nullptr;
    Pointwise pointwise = Pointwise::none;
    const T* aux = nullptr;
    std::int64_t ld_aux = 0;
    void (*rowwise)(T* row, std::int64_t i, std::int64_t j0, std::int64_t n, void* context) = nullptr;
    void* context = nullptr;
    bool empty() const { return bias == nullptr && pointwise == Pointwise::none && rowwise == nullptr; }
};

template <class T>
void gemm(Trans trans_a, Trans trans_b, std::int64_t M, std::int64_t N, std::int64_t K, T alpha,
          const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc,
          const Epilogue<T>& epilogue = {});

// `count` independent products of one shape, as one call (many small
// models trained as one computation): instance i is gemm() on A + i *
// stride_a, B + i * stride_b and C + i * stride_c, with the epilogue's bias
// and aux advanced by bias_stride and aux_stride per instance, and its
// rowwise hook given row i * M + r (so a hook indexing a stack of the
// instances' [M, N] outputs finds its own). The instances are spread over
// the threads when there are enough of them; each gets the bits gemm()
// gives it alone, whatever the threads.
struct Strides {
    std::int64_t a = 0, b = 0, c = 0, bias = 0, aux = 0;
};
template <class T>
void gemm_batched(std::int64_t count, Trans trans_a, Trans trans_b, std::int64_t M, std::int64_t N, std::int64_t K,
                  T alpha, const T* A, std::int64_t lda, const T* B, std::int64_t ldb, T beta, T* C, std::int64_t ldc,
                  const Strides& strides, const Epilogue<T>& epilogue = {});

// The kernel family is core/isa.h's active_isa(), chosen once per process.

// Measures this machine's float FMA peak in GFLOP/s for an ISA family (or the
// active one when none is named), running the family's register-only FMA
// loop on `threads` threads at once for about `seconds`; 0 for a family the
// machine cannot run.
double measure_fma_peak_gflops(std::optional<Isa> isa, std::size_t threads, double seconds = 0.2);

// Threads gemm may use for one product (default: all hardware threads). A
// gemm called from inside a ThreadPool task runs on that thread alone, so a
// sweep's runs do not oversubscribe the cores.
void set_max_threads(std::size_t threads);
std::size_t max_threads();

// body(begin, end) over [0, n) in up to max_threads() contiguous parts, on
// the threads gemm uses; on the calling thread alone inside a ThreadPool
// task or when n < min_parallel. For elementwise work beside the products
// (an optimizer's update), whose values must not depend on the split.
void parallel_ranges(std::size_t n, std::size_t min_parallel, const std::function<void(std::size_t, std::size_t)>& body);

}  // namespace ffn::gemm
