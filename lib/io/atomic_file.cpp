#include "io/atomic_file.h"

#include <fcntl.h>
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

}  // namespace ffn::io
