// The kernel table, one entry per family of core/isa.h, and the active one.
#include <chrono>
#include <vector>

#include "core/thread_pool.h"
#include "gemm/dispatch.h"

namespace ffn::gemm {

namespace {

const PerIsa<KernelFamily>& table() {
    static const PerIsa<KernelFamily> t{avx512_family(), avx2_family(), ref_family()};
    return t;
}

}  // namespace

const KernelFamily& active_family() { return table().active(); }

double measure_fma_peak_gflops(std::optional<Isa> isa, std::size_t threads, double seconds) {
    const Isa which = isa ? *isa : active_isa();
    if (!isa_supported(which)) return 0.0;
    const KernelFamily& f = table()[which];
    // Calibrate a round count that takes about `seconds` on one thread.
    std::int64_t iterations = 1 << 16;
    for (;;) {
        const auto t0 = std::chrono::steady_clock::now();
        f.fma_loop(iterations);
        const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (s > seconds / 4) {
            iterations = static_cast<std::int64_t>(static_cast<double>(iterations) * seconds / s);
            break;
        }
        iterations *= 4;
    }
    ThreadPool pool(threads);
    std::vector<double> flops(threads);
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(threads, [&](std::size_t t) { flops[t] = f.fma_loop(iterations); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double total = 0;
    for (double x : flops) total += x;
    return total / s / 1e9;
}

}  // namespace ffn::gemm
