#pragma once
// PyTorch as a yardstick, measured in the same run: ffn-lab runs its own
// script (bench/torch_reference.py, built into the binary) with a Python
// that has torch, when the machine has one. Nothing in ffn-lab needs it:
// without it the PyTorch columns are null and `about` says why.
#include <cstddef>
#include <string>
#include <vector>

#include "io/json.h"

namespace ffn::bench {

struct TorchRun {
    bool ran = false;
    std::string about;                  // "PyTorch 1.13.0a0, <the BLAS it loaded>", or why there is no figure
    std::vector<io::Json> records;  // one per measurement, as the script prints them
};

// A record's field, whatever the script printed: "" or -1 when it is
// missing or of another type.
std::string text_field(const io::Json& record, const char* key);
double number_field(const io::Json& record, const char* key);

// The Python ffn-lab tries unless --torch names another: Debian's, which is
// where python3-torch installs.
inline constexpr const char* kDefaultPython = "/usr/bin/python3";

// Runs the script's MODE with ARGS on `threads` threads (OPENBLAS_NUM_THREADS
// and OMP_NUM_THREADS too). An empty python means: do not run it.
TorchRun run_torch(const std::string& python, const std::vector<std::string>& mode_and_args, std::size_t threads);

}  // namespace ffn::bench
