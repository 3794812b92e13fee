// The reference family: the shared kernel bodies instantiated with portable
// lanes (ref/lanes.h), compiled without ISA flags. It computes every element
// of C in the canonical order of operations the SIMD families use, one
// std::fma for each of their fused multiply-adds, so it is both the fallback
// on machines without AVX2 and the oracle the SIMD families must equal bit
// for bit. Packing and the epilogue take the driver's portable loops.
#include "gemm/kernel.h"
#include "gemm/kernels/ref/lanes.h"
#include "gemm/kernels/small_gemm.h"
#include "gemm/kernels/tile_kernel.h"

namespace ffn::gemm {

namespace {

constexpr int kMR = 4;

// Four-lane "vectors" give a 4 x 8 register tile: the tile's shape changes
// no result (each element of C is its own chain), only the speed.
template <class T>
using TileLanes = Lanes<T, 4>;
template <class T>
using ReductionLanes = Lanes<T, kReductionLanes<T>>;

// Scalar multiply-adds in 8 independent chains: what portable code reaches.
double fma_loop(std::int64_t iterations) {
    float acc[8];
    for (int i = 0; i < 8; ++i) acc[i] = static_cast<float>(i);
    for (std::int64_t it = 0; it < iterations; ++it)
        for (float& a : acc) a = a * 0.999999f + 1e-7f;
    volatile float sink = acc[0] + acc[7];
    (void)sink;
    return static_cast<double>(iterations) * 8 * 2;
}

template <class T>
KernelShape<T> ref_shape() {
    // Goto's order (NC_L2 = NR): KC x NR of B (8 KiB in float) stays in L1
    // while A slivers stream past.
    return {.kernel = tile_kernel<TileLanes<T>, kMR>,
            .small = small_gemm<TileLanes<T>, ReductionLanes<T>>,
            .MR = kMR,
            .NR = 2 * TileLanes<T>::W,
            .MC = 512 / static_cast<std::int64_t>(sizeof(T)),
            .NC = 16384 / static_cast<std::int64_t>(sizeof(T)),
            .NC_L2 = 2 * TileLanes<T>::W};
}

}  // namespace

KernelFamily ref_family() { return {fma_loop, ref_shape<float>(), ref_shape<double>()}; }

}  // namespace ffn::gemm
