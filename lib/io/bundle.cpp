#include "io/bundle.h"

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "core/error.h"
#include "io/atomic_file.h"

namespace ffn::io::bundle {

namespace fs = std::filesystem;

std::optional<std::string_view> find(std::string_view path) {
    for (std::size_t i = 0; i < kFileCount; ++i)
        if (kFiles[i].path == path) return kFiles[i].bytes;
    return std::nullopt;
}

namespace {

// True when a carried file is `path` or lies below the folder `path`.
bool carries(const std::string& path) {
    if (path.empty()) return false;
    for (std::size_t i = 0; i < kFileCount; ++i) {
        const std::string_view file = kFiles[i].path;
        if (file == path || (file.size() > path.size() && file.starts_with(path) && file[path.size()] == '/')) return true;
    }
    return false;
}

// Where folder() unpacked, once it has: shown() must not unpack to answer.
std::atomic<const std::string*> unpacked_at{nullptr};

// The folder, removed at exit (a static's destructor: after main returns
// or exit() is called; a killed process leaves it in the temp folder).
class Unpacked {
public:
    Unpacked() {
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/ffn-lab-bundle-XXXXXX";
        if (!::mkdtemp(pattern.data())) throw Error(pattern + ": cannot make a private folder for ffn-lab's carried configs");
        path_ = pattern;
        for (std::size_t i = 0; i < kFileCount; ++i) {
            const fs::path file = fs::path(path_) / std::string(kFiles[i].path);
            std::error_code ec;
            fs::create_directories(file.parent_path(), ec);
            if (ec) throw Error(file.parent_path().string() + ": cannot make the folder (" + ec.message() + ")");
            write_file_atomically(file.string(), std::string(kFiles[i].bytes));
        }
        unpacked_at = &path_;
    }
    ~Unpacked() {
        unpacked_at = nullptr;
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

}  // namespace

const std::string& folder() {
    static const Unpacked unpacked;
    return unpacked.path();
}

std::string locate(const std::string& path) {
    std::error_code ec;
    if (path.empty() || fs::path(path).is_absolute() || fs::exists(fs::symlink_status(path, ec))) return path;
    const std::string relative = fs::path(path).lexically_normal().generic_string();
    if (!carries(relative)) return path;
    return (fs::path(folder()) / relative).string();
}

std::string shown(const std::string& path) {
    const std::string* at = unpacked_at;
    if (!at) return path;
    const std::string& where = *at;
    if (path.size() > where.size() && path.starts_with(where) && path[where.size()] == '/')
        return path.substr(where.size() + 1) + std::string(kShownSuffix);
    return path;
}

std::string config_name(const std::string& path) {
    const std::string bare = path.ends_with(kShownSuffix) ? path.substr(0, path.size() - kShownSuffix.size()) : path;
    return fs::path(bare).stem().string();
}

}  // namespace ffn::io::bundle
