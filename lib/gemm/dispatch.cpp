// The kernel table, best first, and the one-time choice among its entries
// (CPUID + OS register-state support through __builtin_cpu_supports, which
// also checks XCR0). FFNLAB_ISA caps the choice.
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

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

}  // namespace ffn::gemm
