#pragma once
// Helpers for tests: a scratch folder removed at scope exit, the source
// tree's location, and every kernel family in turn.
#include <doctest/doctest.h>

#include <filesystem>
#include <random>
#include <string>

#include "gemm/gemm.h"


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

inline std::string source_path(const std::string& relative) {
    return (std::filesystem::path(FFNLAB_TEST_SOURCE_DIR) / relative).string();
}

// Puts back the kernel family that was active when it was made, however
// the scope ends (a failed REQUIRE throws): a test that forces a family
// never leaves later tests on the wrong kernels.
class IsaGuard {
public:
    IsaGuard() : before_(gemm::active_isa()) {}
    ~IsaGuard() { gemm::set_isa(before_.c_str()); }
    IsaGuard(const IsaGuard&) = delete;
    IsaGuard& operator=(const IsaGuard&) = delete;

private:
    std::string before_;
};

// body(isa) once per kernel family this CPU supports, reference first,
// with that family forced, as Highway runs a test once per target.
template <class Body>
void for_each_isa(Body&& body) {
    const IsaGuard guard;
    int count = 0;
    const char* const* isas = gemm::supported_isas(&count);
    for (int i = 0; i < count; ++i) {
        const std::string isa = isas[i];
        CAPTURE(isa);
        REQUIRE(gemm::set_isa(isa.c_str()));
        body(isa);
    }
}

}  // namespace ffn::test
