#include "io/atomic_file.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"

namespace ffn::io {

namespace {
[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw Error(path + ": " + what + " (" + std::strerror(errno) + ")");
}
}  // namespace

void write_file_atomically(const std::string& path, const std::string& contents) {
    std::string temp = path + ".tmp-XXXXXX";
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) fail(path, "cannot create a temporary file beside it");
    std::size_t written = 0;
    while (written < contents.size()) {
        const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
        if (n < 0) {
            if (errno == EINTR) continue;
            ::close(fd);
            ::unlink(temp.c_str());
            fail(path, "cannot write");
        }
        written += static_cast<std::size_t>(n);
    }
    // mkstemp makes the file 0600; results are ordinary readable files.
    if (::fchmod(fd, 0644) != 0 || ::fsync(fd) != 0) {
        ::close(fd);
        ::unlink(temp.c_str());
        fail(path, "cannot finish writing");
    }
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

namespace fs = std::filesystem;

StagedFolder::StagedFolder(const std::string& path, const std::string& marker, const std::string& keep) : path_(path), keep_(keep) {
    if (path.empty()) throw Error("output folder: an empty path");
    std::error_code ec;
    const fs::path target = fs::path(path).lexically_normal();
    if (target.filename().empty() || target.filename() == "." || target.filename() == "..")
        throw Error(path + ": name a folder of its own for the output (not . or ..)");
    if (fs::exists(target, ec)) {
        if (!fs::is_directory(target, ec)) throw Error(path + ": exists and is not a folder");
        // A folder holding only `keep`, and `keep` only files of the
        // cache's names (16 hex digits and .json, or a killed write's
        // .tmp- file): anything else may be somebody's data.
        const auto only_keep = [&] {
            if (keep.empty()) return false;
            std::error_code list;
            for (const auto& entry : fs::directory_iterator(target, list))
                if (entry.path().filename() != keep) return false;
            if (list) return false;
            for (const auto& entry : fs::directory_iterator(target / keep, list)) {
                const std::string name = entry.path().filename().string();
                const bool hex = name.size() >= 21 && name.compare(16, 5, ".json") == 0 &&
                                 name.find_first_not_of("0123456789abcdef") == 16;
                if (!hex || !(name.size() == 21 || name.compare(21, 5, ".tmp-") == 0) || !entry.is_regular_file(list)) return false;
            }
            return !list;
        };
        if (!fs::is_empty(target, ec) && !fs::exists(target / marker, ec) && !only_keep())
            throw Error(path + ": holds files ffn-lab did not write (no " + marker +
                        "); its contents would be replaced, so name a new or empty folder");
    }
    const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
    fs::create_directories(parent, ec);
    std::string name = (parent / ("." + target.filename().string() + ".staging-XXXXXX")).string();
    if (!::mkdtemp(name.data())) fail(path, "cannot create a folder beside it");
    staging_ = name;
}

StagedFolder::~StagedFolder() {
    if (committed_) return;
    std::error_code ec;
    fs::remove_all(staging_, ec);
}

std::string StagedFolder::file(const std::string& name) const { return (fs::path(staging_) / name).string(); }

void StagedFolder::commit() {
    std::error_code ec;
    // The kept subfolder's files, linked (not copied) into the new set; a
    // ".tmp-" name is what a killed write_file_atomically left.
    if (!keep_.empty() && fs::is_directory(fs::path(path_) / keep_, ec)) {
        const fs::path into = fs::path(staging_) / keep_;
        fs::create_directories(into, ec);
        for (const auto& entry : fs::directory_iterator(fs::path(path_) / keep_, ec)) {
            const std::string name = entry.path().filename().string();
            if (name.find(".tmp-") != std::string::npos || !entry.is_regular_file(ec)) continue;
            fs::create_hard_link(entry.path(), into / name, ec);
            if (ec) fs::copy_file(entry.path(), into / name, fs::copy_options::overwrite_existing, ec);
            if (ec) fail(path_, "cannot carry " + (fs::path(keep_) / name).string() + " into the new set");
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
        return;
    }
    if (::renameat2(AT_FDCWD, staging_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) != 0)
        fail(path_, "cannot swap the new output set in");
    // The old set now sits at the staging name.
    fs::remove_all(staging_, ec);
    committed_ = true;
}

}  // namespace ffn::io
