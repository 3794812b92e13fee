#pragma once
// The one registry of instruction-set families. ffn-lab builds some of its
// code once per family (the gemm micro-kernels, the smooth activations'
// loops, the width sweep's narrow trainer), each build in a file of its own
// under <layer>/kernels/<isa>/ compiled with that family's flags. The family
// is chosen once per process, here, from CPUID and the OS's saved register
// state; FFNLAB_ISA=ref|avx2|avx512 caps it (asking for more than the
// machine has falls back to what it has). Every layer with per-ISA code
// keeps one PerIsa table of its builds, indexed by this enum. A new family
// is one enum value (and its place in kAllIsas), one row of isa.cpp's
// kFamilies (its name and CPU check), its kernels/<isa>/ files with their
// flags in lib/CMakeLists.txt, and one entry per table: a table that misses
// it does not compile. The CLI's choices, `ffn-lab --version` and build.sh
// take the list from here.
// Every family computes the same bits (the canonical order of operations,
// gemm/gemm.h): the choice changes speed only.
#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ffn {

// Best first.
enum class Isa : int { avx512, avx2, ref };
inline constexpr std::size_t kIsaCount = 3;

// Every family, best first: the enum's values, for the CLI's choices and
// whatever lists the families.
inline constexpr std::array<Isa, kIsaCount> kAllIsas = {Isa::avx512, Isa::avx2, Isa::ref};

const char* isa_name(Isa isa);
std::optional<Isa> parse_isa(std::string_view name);
// The families' names, in the enum's order ("avx512", "avx2", "ref").
std::vector<std::string> isa_names();
// Whether this CPU and OS can run the family's instructions.
bool isa_supported(Isa isa);

// The family in use, chosen at first use.
Isa active_isa();
// Forces a family for the calling process (tests and benchmarks); false when
// the machine cannot run it. Not thread-safe against running kernels.
bool set_isa(Isa isa);
// Every family this machine can run, reference first (the tests' order:
// the oracle before what is checked against it).
std::vector<Isa> supported_isas();
// The value of FFNLAB_ISA when it names no family, else null: the library
// then ignores it and the front end refuses it.
const char* unknown_isa_cap();

// One kind of kernel's builds, one per family in the enum's order, and the
// active one. Made from exactly kIsaCount entries: a table that misses a
// family does not compile.
template <class Entry>
struct PerIsa {
    template <class... Entries>
        requires(sizeof...(Entries) == kIsaCount)
    explicit PerIsa(Entries&&... builds) : entries{std::forward<Entries>(builds)...} {}

    std::array<Entry, kIsaCount> entries;
    const Entry& operator[](Isa isa) const { return entries[static_cast<std::size_t>(isa)]; }
    const Entry& active() const { return (*this)[active_isa()]; }
};

}  // namespace ffn
