#pragma once
// The register-tile micro-kernel body shared by the SIMD families. It holds
// no intrinsics: a traits type S supplies the vector type V, its width W and
// its operations, and each ISA's file instantiates it under its own flags.
//
// The tile is MR rows x 2 vectors of C. The accumulators are only ever
// indexed by compile-time constants (every loop over them is unrolled), so
// they live in registers; a runtime index would force them onto the stack.
#include <cstdint>

namespace ffn::gemm {
// Internal linkage on purpose: each ISA's file compiles its own copy of these
// bodies under its own flags. With external linkage the linker could keep the
// AVX-512 build of a shared inline function for the AVX2 family too, and an
// AVX2-only CPU would fault on it.
namespace {

// Rows < MR computes only the first Rows rows of an MR-row packed sliver: the
// last sliver of A when M is not a multiple of MR (512 = 42 x 12 + 8). Each
// element is summed exactly as in the full kernel.
template <class S, int MR, int Rows = MR>
void tile_kernel(std::int64_t kc, const typename S::T* a, const typename S::T* b, typename S::T* c, std::int64_t ldc,
                 std::int64_t m, std::int64_t n, typename S::T alpha, typename S::T beta) {
    using T = typename S::T;
    using V = typename S::V;
    constexpr int W = S::W, NR = 2 * W;
    V acc[Rows][2];
#pragma GCC unroll 16
    for (int i = 0; i < Rows; ++i) acc[i][0] = acc[i][1] = S::zero();
    for (std::int64_t k = 0; k < kc; ++k, a += MR, b += NR) {
        const V b0 = S::load(b), b1 = S::load(b + W);
#pragma GCC unroll 16
        for (int i = 0; i < Rows; ++i) {
            const V ai = S::set1(a[i]);
            acc[i][0] = S::fmadd(ai, b0, acc[i][0]);
            acc[i][1] = S::fmadd(ai, b1, acc[i][1]);
        }
    }
    // C = alpha * AB + beta * C, the two products rounded separately.
    const V va = S::set1(alpha), vb = S::set1(beta);
    if (m == Rows && n == NR) {
#pragma GCC unroll 16
        for (int i = 0; i < Rows; ++i) {
#pragma GCC unroll 2
            for (int v = 0; v < 2; ++v) {
                T* p = c + i * ldc + W * v;
                const V scaled = S::mul(va, acc[i][v]);
                S::storeu(p, beta == T(0) ? scaled : S::add(scaled, S::mul(vb, S::loadu(p))));
            }
        }
        return;
    }
    alignas(64) T tile[Rows][NR];
#pragma GCC unroll 16
    for (int i = 0; i < Rows; ++i) {
        S::store(&tile[i][0], S::mul(va, acc[i][0]));
        S::store(&tile[i][W], S::mul(va, acc[i][1]));
    }
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            T& out = c[i * ldc + j];
            out = beta == T(0) ? tile[i][j] : tile[i][j] + beta * out;
        }
}

// The machine's FMA peak for a vector width: Chains independent accumulator
// chains (enough to cover FMA latency on two pipes), registers only, no
// memory traffic. Returns the flops done.
template <class S, int Chains>
double fma_peak_loop(std::int64_t iterations) {
    using T = typename S::T;
    using V = typename S::V;
    V acc[Chains];
#pragma GCC unroll 16
    for (int i = 0; i < Chains; ++i) acc[i] = S::set1(static_cast<T>(i));
    const V x = S::set1(T(0.999999)), y = S::set1(T(1e-7));
    for (std::int64_t it = 0; it < iterations; ++it)
#pragma GCC unroll 16
        for (int i = 0; i < Chains; ++i) acc[i] = S::fmadd(acc[i], x, y);
    V sum = acc[0];
#pragma GCC unroll 16
    for (int i = 1; i < Chains; ++i) sum = S::add(sum, acc[i]);
    alignas(64) T lanes[S::W];
    S::store(lanes, sum);
    volatile T sink = lanes[0];  // keeps the loop from being optimised away
    (void)sink;
    return static_cast<double>(iterations) * Chains * S::W * 2;
}

}  // namespace
}  // namespace ffn::gemm
