#include "io/bundle.h"

#include <atomic>
#include <csignal>
#include <ctime>
#include <pthread.h>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <system_error>
#include <unistd.h>
#include <vector>

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
// Its paths, files first and folders deepest first, once it is whole: what
// a signal handler removes.
std::atomic<const std::vector<std::string>*> removal_list{nullptr};
// True while a thread fills the folder (with SIGINT and SIGTERM held).
std::atomic<bool> unpacking{false};

// The folder, removed at exit (a static's destructor: after main returns
// or exit() is called), or by remove_folder_in_signal.
class Unpacked {
public:
    Unpacked() {
        // Ctrl-C while the files are written waits until the list of what to
        // remove is whole (a fraction of a second), then removes them all:
        // held on this thread, and waited for by a handler on another.
        unpacking = true;
        sigset_t held, before;
        sigemptyset(&held);
        sigaddset(&held, SIGINT);
        sigaddset(&held, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &held, &before);
        struct Unblock {
            const sigset_t& before;
            ~Unblock() {
                unpacking = false;
                pthread_sigmask(SIG_SETMASK, &before, nullptr);
            }
        } unblock{before};
        const char* tmp = std::getenv("TMPDIR");
        std::string pattern = (tmp && *tmp ? std::string(tmp) : std::string("/tmp")) + "/ffn-lab-bundle-XXXXXX";
        if (!::mkdtemp(pattern.data())) throw Error(pattern + ": cannot make a private folder for ffn-lab's carried configs");
        path_ = pattern;
        std::set<std::string> folders;
        for (std::size_t i = 0; i < kFileCount; ++i) {
            const fs::path file = fs::path(path_) / std::string(kFiles[i].path);
            std::error_code ec;
            fs::create_directories(file.parent_path(), ec);
            if (ec) throw Error(file.parent_path().string() + ": cannot make the folder (" + ec.message() + ")");
            write_file_atomically(file.string(), std::string(kFiles[i].bytes));
            paths_.push_back(file.string());
            for (fs::path f = file.parent_path(); f.string().size() > path_.size(); f = f.parent_path()) folders.insert(f.string());
        }
        std::vector<std::string> deepest_first(folders.rbegin(), folders.rend());  // a folder sorts before what it holds
        paths_.insert(paths_.end(), deepest_first.begin(), deepest_first.end());
        paths_.push_back(path_);
        unpacked_at = &path_;
        removal_list = &paths_;
    }
    ~Unpacked() {
        removal_list = nullptr;
        unpacked_at = nullptr;
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
    std::vector<std::string> paths_;
};

}  // namespace

void remove_folder_in_signal() noexcept {
    // At most two seconds for another thread's unpacking to finish.
    for (int waited = 0; unpacking.load() && waited < 2000; ++waited) {
        const timespec millisecond{0, 1'000'000};
        ::nanosleep(&millisecond, nullptr);
    }
    const std::vector<std::string>* paths = removal_list.exchange(nullptr);
    if (!paths) return;
    for (const std::string& p : *paths)
        if (::unlink(p.c_str()) != 0) ::rmdir(p.c_str());
}

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
