#pragma once
// PyTorch as a yardstick, measured in the same run: ffn-lab runs its own
// script (bench/torch_reference.py, built into the binary) with a Python
// that has torch, when the machine has one. Nothing in ffn-lab needs it:
// without it the PyTorch columns are null and `about` says why.
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/json.h"
#include "io/process.h"

namespace ffn::bench {

// The Python ffn-lab tries unless --torch names another: Debian's, which is
// where python3-torch installs.
inline constexpr const char* kDefaultPython = "/usr/bin/python3";

// A record's field, whatever the script printed: "" or -1 when it is
// missing or of another type.
std::string text_field(const io::Json& record, const char* key);
double number_field(const io::Json& record, const char* key);

// The script running in one of its modes on `threads` threads
// (OPENBLAS_NUM_THREADS and OMP_NUM_THREADS too). An empty python: no
// session. Once anything fails, ok() is false and about() says why in one
// line; ffn-lab's own figures go on without PyTorch's.
class TorchSession {
public:
    TorchSession(const std::string& python, const std::vector<std::string>& mode_and_args, std::size_t threads);

    bool ok() const { return program_ != nullptr; }
    // "PyTorch 1.13.0a0, <the BLAS it loaded>", or why there is no figure.
    const std::string& about() const { return about_; }
    // One request line, and the record it answers with.
    std::optional<io::Json> ask(const std::string& request);
    // Every record the script prints until it ends (the batch modes); none
    // unless it ends with status 0.
    std::vector<io::Json> all_records();

private:
    std::optional<io::Json> next_record();  // the next record; an error record ends the session
    // Ends the session: about() says why. Without its exit status (it has
    // not ended by itself), the program is killed first.
    void fail(const std::string& why, std::optional<int> exit_status = std::nullopt);

    std::string python_;
    std::unique_ptr<io::Coprocess> program_;
    std::string about_;
    bool header_seen_ = false, ended_cleanly_ = false;
    bool serving_ = false;  // asked for answers: its end is a failure
};

}  // namespace ffn::bench
