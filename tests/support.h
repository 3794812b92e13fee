#pragma once
// Helpers for tests: a scratch folder removed at scope exit, and the source
// tree's location.
#include <filesystem>
#include <random>
#include <string>


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

}  // namespace ffn::test
