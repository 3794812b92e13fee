#include "core/isa.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

namespace ffn {

namespace {

struct Family {
    Isa isa;
    const char* name;
    bool (*supported)();
};

// __builtin_cpu_supports also checks that the OS saves the registers (XCR0).
constexpr std::array<Family, kIsaCount> kFamilies = {{
    // Its builds use FMA's 256-bit instructions too (-mfma), and the toy
    // models' draws AVX-512DQ's 64-bit multiply: every AVX-512 CPU but the
    // Xeon Phi has both, and the check says so.
    {Isa::avx512, "avx512", [] { __builtin_cpu_init(); return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("fma"); }},
    {Isa::avx2, "avx2", [] { __builtin_cpu_init(); return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }},
    {Isa::ref, "ref", [] { return true; }},
}};

// Each row at its enum's index, and kAllIsas in the enum's order: isa_name
// and the tables index by the enum.
static_assert([] {
    for (std::size_t i = 0; i < kIsaCount; ++i)
        if (kFamilies[i].isa != static_cast<Isa>(i) || kAllIsas[i] != static_cast<Isa>(i)) return false;
    return true;
}());

// The first supported family at or below the cap named by FFNLAB_ISA.
Isa initial_choice() {
    const char* cap = std::getenv("FFNLAB_ISA");
    const auto capped = cap ? parse_isa(cap) : std::nullopt;
    for (const Family& f : kFamilies)
        if ((!capped || static_cast<int>(f.isa) >= static_cast<int>(*capped)) && f.supported()) return f.isa;
    return Isa::ref;
}

std::atomic<int> current{-1};

}  // namespace

const char* isa_name(Isa isa) { return kFamilies[static_cast<std::size_t>(isa)].name; }

std::optional<Isa> parse_isa(std::string_view name) {
    for (const Family& f : kFamilies)
        if (name == f.name) return f.isa;
    return std::nullopt;
}

std::vector<std::string> isa_names() {
    std::vector<std::string> names;
    for (const Family& f : kFamilies) names.emplace_back(f.name);
    return names;
}

bool isa_supported(Isa isa) { return kFamilies[static_cast<std::size_t>(isa)].supported(); }

Isa active_isa() {
    int chosen = current.load(std::memory_order_acquire);
    if (chosen >= 0) return static_cast<Isa>(chosen);
    static std::once_flag once;
    std::call_once(once, [] {
        int none = -1;
        current.compare_exchange_strong(none, static_cast<int>(initial_choice()));
    });
    return static_cast<Isa>(current.load(std::memory_order_acquire));
}

bool set_isa(Isa isa) {
    if (!isa_supported(isa)) return false;
    active_isa();  // the one-time choice first, so that it cannot overwrite this one
    current.store(static_cast<int>(isa), std::memory_order_release);
    return true;
}

std::vector<Isa> supported_isas() {
    std::vector<Isa> out;
    for (auto f = kFamilies.rbegin(); f != kFamilies.rend(); ++f)
        if (f->supported()) out.push_back(f->isa);
    return out;
}

const char* unknown_isa_cap() {
    const char* cap = std::getenv("FFNLAB_ISA");
    return cap && !parse_isa(cap) ? cap : nullptr;
}

}  // namespace ffn
