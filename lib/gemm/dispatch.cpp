// The kernel table, best first, and the one-time choice among its entries
// (CPUID + OS register-state support through __builtin_cpu_supports, which
// also checks XCR0). FFNLAB_ISA caps the choice.
#include <atomic>
#include <chrono>
#include <vector>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "core/thread_pool.h"
#include "gemm/dispatch.h"

namespace ffn::gemm {

namespace {

struct Table {
    KernelFamily families[3];
    const char* supported_names[3];
    int supported_count = 0;
};

const Table& table() {
    static const Table t = [] {
        Table t{{avx512_family(), avx2_family(), ref_family()}, {}, 0};
        for (const auto& f : t.families)
            if (f.supported()) t.supported_names[t.supported_count++] = f.name;
        return t;
    }();
    return t;
}

const KernelFamily* find(const char* name) {
    for (const auto& f : table().families)
        if (std::strcmp(f.name, name) == 0) return &f;
    return nullptr;
}

// The first supported family at or below the cap named by FFNLAB_ISA.
const KernelFamily* initial_choice() {
    const char* cap = std::getenv("FFNLAB_ISA");
    bool below_cap = cap == nullptr || find(cap) == nullptr;
    for (const auto& f : table().families) {
        if (!below_cap && std::strcmp(f.name, cap) == 0) below_cap = true;
        if (below_cap && f.supported()) return &f;
    }
    return find("ref");
}

std::atomic<const KernelFamily*> current{nullptr};

}  // namespace

const KernelFamily& active_family() {
    const KernelFamily* f = current.load(std::memory_order_acquire);
    if (f) return *f;
    static std::once_flag once;
    std::call_once(once, [] {
        const KernelFamily* expected = nullptr;
        current.compare_exchange_strong(expected, initial_choice());
    });
    return *current.load(std::memory_order_acquire);
}

const char* active_isa() { return active_family().name; }

const char* unknown_isa_cap() {
    const char* cap = std::getenv("FFNLAB_ISA");
    return cap && !find(cap) ? cap : nullptr;
}

const char* const* supported_isas(int* count) {
    *count = table().supported_count;
    return table().supported_names;
}

bool set_isa(const char* name) {
    const KernelFamily* f = find(name);
    if (!f || !f->supported()) return false;
    current.store(f, std::memory_order_release);
    return true;
}

double measure_fma_peak_gflops(const char* name, std::size_t threads, double seconds) {
    const KernelFamily* f = name ? find(name) : &active_family();
    if (!f || !f->supported()) return 0.0;
    // Calibrate a round count that takes about `seconds` on one thread.
    std::int64_t iterations = 1 << 16;
    for (;;) {
        const auto t0 = std::chrono::steady_clock::now();
        f->fma_loop(iterations);
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
    pool.parallel_for(threads, [&](std::size_t t) { flops[t] = f->fma_loop(iterations); });
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double total = 0;
    for (double x : flops) total += x;
    return total / s / 1e9;
}

}  // namespace ffn::gemm
