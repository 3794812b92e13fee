#pragma once
// What every fuzz harness shares. An input either works or is refused with
// ffn::Error(bad_input), which the app prints as one line with exit 2; any
// other exception escapes and libFuzzer reports it as a crash, because the
// app would have printed "internal error" (exit 3) for it.
//
// The readers under test take file names, as the app does, so each input is
// written to a file in one scratch folder per process (in /dev/shm when
// there is one: no disk traffic at thousands of inputs per second).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>

#include "core/error.h"
#include "io/atomic_file.h"

namespace ffn::fuzz {

// The folder, removed when the process ends normally (a static's
// destructor: an atexit handler registered inside the static's initializer
// would run after the static is gone).
class ScratchFolder {
public:
    ScratchFolder() {
        const char* base = std::filesystem::is_directory("/dev/shm") ? "/dev/shm" : "/tmp";
        std::string pattern = std::string(base) + "/ffnlab-fuzz-XXXXXX";
        if (!::mkdtemp(pattern.data())) std::abort();
        path_ = pattern;
    }
    ~ScratchFolder() {
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    ScratchFolder(const ScratchFolder&) = delete;
    ScratchFolder& operator=(const ScratchFolder&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
};

inline const std::filesystem::path& scratch_folder() {
    static const ScratchFolder folder;
    return folder.path();
}

// Writes `bytes` to the scratch file `name` and returns its path.
inline std::string scratch_file(const std::string& name, std::string_view bytes) {
    const std::string path = (scratch_folder() / name).string();
    io::write_file_atomically(path, std::string(bytes));
    return path;
}

// Runs `f`; a refusal as bad input is a correct answer.
template <class F>
int accept_or_refuse(F&& f) {
    try {
        f();
    } catch (const Error& e) {
        if (e.code() != ExitCode::bad_input) std::abort();  // input reached another exit code
    }
    return 0;
}

}  // namespace ffn::fuzz
