#pragma once
// Helpers for tests: a scratch folder removed at scope exit, the source
// tree's location, and every kernel family in turn.
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/isa.h"


namespace ffn::test {

class TempDir {
public:
    TempDir() {
        std::random_device rd;
        path_ = std::filesystem::temp_directory_path() / ("ffnlab-test-" + std::to_string(rd()) + std::to_string(rd()));
        std::filesystem::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string file(const std::string& name) const { return (path_ / name).string(); }

private:
    std::filesystem::path path_;
};

// Bit for bit (memcmp: -0 and +0 differ, a NaN equals only its own bits).
template <class T>
bool same_bits(const T* a, const T* b, std::size_t n) {
    return std::memcmp(a, b, n * sizeof(T)) == 0;
}
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
    return a.size() == b.size() && same_bits(a.data(), b.data(), a.size());
}

inline std::string source_path(const std::string& relative) {
    return (std::filesystem::path(FFNLAB_TEST_SOURCE_DIR) / relative).string();
}

// Puts back the kernel family that was active when it was made, however
// the scope ends (a failed REQUIRE throws): a test that forces a family
// never leaves later tests on the wrong kernels.
class IsaGuard {
public:
    IsaGuard() : before_(active_isa()) {}
    ~IsaGuard() { set_isa(before_); }
    IsaGuard(const IsaGuard&) = delete;
    IsaGuard& operator=(const IsaGuard&) = delete;

private:
    Isa before_;
};

// body(isa) once per kernel family this CPU supports, reference first,
// with that family forced, as Highway runs a test once per target.
template <class Body>
void for_each_isa(Body&& body) {
    const IsaGuard guard;
    for (const Isa isa : supported_isas()) {
        const std::string name = isa_name(isa);
        CAPTURE(name);
        REQUIRE(set_isa(isa));
        body(isa);
    }
}

}  // namespace ffn::test
