#include "io/atomic_file.h"
#include "io/bundle.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "core/error.h"
#include "core/hash.h"

namespace ffn::io {

namespace {
[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw Error(path + ": " + what + " (" + std::strerror(errno) + ")");
}
}  // namespace

void write_file_atomically(const std::string& path, const std::string& contents) {
    write_file_atomically(path, [&](const Emit& emit) { emit(contents); });
}

void write_file_atomically(const std::string& path, const std::function<void(const Emit&)>& produce) {
    std::string temp = path + ".tmp-XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) fail(path, "cannot create a temporary file beside it");
    const auto give_up = [&](const char* what) {
        const int saved = errno;
        ::close(fd);
        ::unlink(temp.c_str());
        errno = saved;
        fail(path, what);
    };
    const auto write_all = [&](std::string_view piece) {
        while (!piece.empty()) {
            const ssize_t n = ::write(fd, piece.data(), piece.size());
            if (n < 0) {
                if (errno == EINTR) continue;
                fail(path, "cannot write");  // the temporary file goes below
            }
            piece.remove_prefix(static_cast<std::size_t>(n));
        }
    };
    // Pieces are gathered into writes of about a megabyte.
    constexpr std::size_t kChunk = std::size_t{1} << 20;
    std::string pending;
    try {
        produce([&](std::string_view piece) {
            if (pending.size() + piece.size() > kChunk) {
                write_all(pending);
                pending.clear();
            }
            if (piece.size() > kChunk) write_all(piece);
            else pending.append(piece);
        });
        write_all(pending);
    } catch (...) {
        ::close(fd);
        ::unlink(temp.c_str());
        throw;
    }
    // mkstemp makes the file 0600; results are ordinary readable files.
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) give_up("cannot finish writing");
    ::close(fd);
    if (::rename(temp.c_str(), path.c_str()) != 0) {
        ::unlink(temp.c_str());
        fail(path, "cannot move the finished file into place");
    }
}

std::string read_file(const std::string& path) {
    // Only regular files: a FIFO or a device would block or never end.
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (std::filesystem::is_directory(status)) throw Error(path + ": is a directory, expected a file");
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        throw Error(path + ": not a regular file (a pipe or a device?), expected a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

std::uint64_t hash_file(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) throw Error(path + ": not a regular file, expected a file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
    std::string piece(std::size_t{1} << 20, '\0');
    std::uint64_t h = fnv1a64("");
    while (in) {
        in.read(piece.data(), static_cast<std::streamsize>(piece.size()));
        h = fnv1a64(std::string_view(piece.data(), static_cast<std::size_t>(in.gcount())), h);
    }
    if (in.bad()) throw Error(path + ": cannot read file (" + std::strerror(errno) + ")");
    return h;
}

namespace fs = std::filesystem;

std::uint64_t fingerprint(const std::string& given) {
    const std::string path = bundle::locate(given);
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (fs::is_directory(status)) {
        std::vector<std::string> names;
        for (const auto& e : fs::directory_iterator(path, ec))
            if (e.is_regular_file(ec)) names.push_back(e.path().filename().string());
        if (ec) throw Error(path + ": cannot list the folder (" + ec.message() + ")");
        std::sort(names.begin(), names.end());
        std::uint64_t h = fnv1a64("folder");
        for (const auto& name : names) h = hash_combine(fnv1a64(name, h), fingerprint((fs::path(path) / name).string()));
        return h;
    }
    constexpr std::uint64_t kWhole = std::uint64_t{64} << 20, kEnd = std::uint64_t{1} << 20;
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) throw Error(path + ": not a regular file or folder");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size <= kWhole) return hash_file(path);
    std::uint64_t h = hash_combine(hash_combine(fnv1a64("large file"), size),
                                   hash_combine(static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
                                                    static_cast<std::uint64_t>(st.st_mtim.tv_nsec),
                                                hash_combine(static_cast<std::uint64_t>(st.st_ino), static_cast<std::uint64_t>(st.st_dev))));
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
    std::string piece(kEnd, '\0');
    for (const std::uint64_t at : {std::uint64_t{0}, size - kEnd}) {
        in.seekg(static_cast<std::streamoff>(at));
        in.read(piece.data(), static_cast<std::streamsize>(kEnd));
        if (!in) throw Error(path + ": cannot read file (" + std::strerror(errno) + ")");
        h = fnv1a64(piece, h);
    }
    return h;
}

StagedFolder::StagedFolder(const std::string& path, const std::string& keep) : path_(path), keep_(keep) {
    if (path.empty()) throw Error("output folder: an empty path");
    const fs::path target = fs::path(path).lexically_normal();
    if (target.filename().empty() || target.filename() == "." || target.filename() == "..")
        throw Error(path + ": name a folder of its own for the output (not . or ..)");
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw Error(parent.string() + ": cannot create the folder (" + ec.message() + ")");
    std::string name = (parent / ("." + target.filename().string() + ".staging-XXXXXX")).string();
    if (!::mkdtemp(name.data())) fail(path, "cannot create a folder beside it");
    staging_ = name;
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::chmod(staging_.c_str(), 0777 & ~mask);
}

StagedFolder::~StagedFolder() {
    if (committed_) return;
    std::error_code ec;
    fs::remove_all(staging_, ec);
}

std::string StagedFolder::file(const std::string& name) const { return (fs::path(staging_) / name).string(); }

std::string StagedFolder::commit() {
    std::error_code ec;
    // The kept subfolder's files, linked (not copied) into the new set; a
    // ".tmp-" name is what a killed write_file_atomically left.
    if (!keep_.empty() && fs::is_directory(fs::symlink_status(fs::path(path_) / keep_, ec))) {
        const fs::path into = fs::path(staging_) / keep_;
        fs::create_directories(into, ec);
        for (const auto& entry : fs::directory_iterator(fs::path(path_) / keep_, ec)) {
            const std::string name = entry.path().filename().string();
            if (name.find(".tmp-") != std::string::npos || !entry.is_regular_file(ec)) continue;
            fs::create_hard_link(entry.path(), into / name, ec);
            if (ec) fs::copy_file(entry.path(), into / name, fs::copy_options::overwrite_existing, ec);
            if (ec) throw Error(path_ + ": cannot carry " + (fs::path(keep_) / name).string() + " into the new set (" + ec.message() + ")");
        }
    }
    // The staging folder's entries are on disk (write_file_atomically syncs
    // each file); sync the folder too, so the exchange cannot expose names
    // without their files after a crash.
    if (const int fd = ::open(staging_.c_str(), O_RDONLY | O_DIRECTORY); fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
    if (::rename(staging_.c_str(), path_.c_str()) == 0) {
        committed_ = true;  // there was no folder, or an empty one (rename replaces an empty folder)
        return "";
    }
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0)
        fail(path_, "cannot swap the new output set in");
    committed_ = true;
    return staging_;  // where the old set now sits
}

std::vector<std::string> staging_leftovers(const std::string& path) {
    const fs::path target = fs::path(path).lexically_normal();
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    const std::string prefix = "." + target.filename().string() + ".staging-";
    std::vector<std::string> found;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(parent, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.size() == prefix.size() + 6 && name.starts_with(prefix) && entry.is_directory(ec) && !entry.is_symlink(ec))
            found.push_back(entry.path().string());
    }
    return found;
}

FolderLock::FolderLock(const std::string& path, const std::string& note,
                       const std::function<void(const std::string&)>& may_wait) {
    const fs::path target = fs::path(path).lexically_normal();
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::error_code ec;
    fs::create_directories(parent, ec);
    if (ec) throw Error(parent.string() + ": cannot create the folder (" + ec.message() + ")");
    file_ = (parent / ("." + target.filename().string() + ".lock")).string();
    bool asked = false;
    // The holder removes the file as it lets go (so that no lock file
    // outlives a run), and a waiter may then hold a removed file's lock:
    // taken again until the file locked is the one at the name.
    for (;;) {
        // O_NOFOLLOW: a link planted at the lock's name is refused, not written through.
        fd_ = ::open(file_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
        if (fd_ < 0) fail(path, "cannot make the lock file " + file_ + " beside it");
        // A file of that name that is not a lock note ffn-lab wrote (a
        // user's, a hard link to one) is never truncated or removed.
        struct stat held {};
        char head[32] = {};
        const ssize_t got = ::pread(fd_, head, sizeof head - 1, 0);
        const std::string start(head, got > 0 ? static_cast<std::size_t>(got) : 0);
        // A note is "PID text"; one being written (truncated, then written
        // while we read) may show as digits alone or as zero bytes.
        const auto digits = start.find_first_not_of("0123456789");
        const bool note_like = start.empty() || digits == std::string::npos || start[digits] == '\0' ||
                               (digits > 0 && start[digits] == ' ');
        const bool stat_ok = ::fstat(fd_, &held) == 0;
        if (stat_ok && S_ISREG(held.st_mode) && held.st_nlink == 0) {
            // The holder removed it as it let go, between our open and now:
            // open the name again.
            ::close(fd_);
            continue;
        }
        if (!stat_ok || !S_ISREG(held.st_mode) || held.st_nlink != 1 || !note_like) {
            ::close(fd_);
            fd_ = -1;
            throw Error(path + ": " + file_ + " is not a lock file ffn-lab wrote; remove it, or name another folder");
        }
        if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
            // The holder writes its note just after it takes the lock, and the
            // file may still hold a dead process's note: wait (2 s at most) for
            // a note whose process is alive, or for the lock to come free.
            std::string holder;
            bool free = false;
            for (int attempt = 0; attempt < 100 && !free; ++attempt) {
                std::string text(65536, '\0');
                const ssize_t n = ::pread(fd_, text.data(), text.size(), 0);
                text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
                if (const auto end = text.find('\n'); end != std::string::npos) text.resize(end);
                const auto space = text.find(' ');
                const long pid = space == std::string::npos ? 0 : std::strtol(text.c_str(), nullptr, 10);
                if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0) {
                    holder = text.substr(space + 1);
                    break;
                }
                ::usleep(20000);
                free = ::flock(fd_, LOCK_EX | LOCK_NB) == 0;
            }
            try {
                if (!free && !asked) may_wait(holder);
                asked = true;
            } catch (...) {
                ::close(fd_);
                fd_ = -1;
                throw;
            }
            while (!free && ::flock(fd_, LOCK_EX) != 0)
                if (errno != EINTR) {
                    ::close(fd_);
                    fail(path, "cannot lock " + file_);
                }
        }
        struct stat locked {}, named {};
        if (::fstat(fd_, &locked) == 0 && ::lstat(file_.c_str(), &named) == 0 && locked.st_dev == named.st_dev && locked.st_ino == named.st_ino)
            break;
        ::close(fd_);
    }
    const std::string line = std::to_string(::getpid()) + " " + note + "\n";
    // The note only informs the next comer: the lock is held whether or not it is written.
    [[maybe_unused]] const bool noted =
        ::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, line.data(), line.size(), 0) == static_cast<ssize_t>(line.size());
}

FolderLock::~FolderLock() {
    if (fd_ < 0) return;
    // Still held, so no other ffn-lab has this name's lock; removed only
    // while the name is still this file.
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::lstat(file_.c_str(), &named) == 0 && held.st_dev == named.st_dev && held.st_ino == named.st_ino)
        ::unlink(file_.c_str());
    ::close(fd_);  // drops the flock
}

}  // namespace ffn::io
