#include "bench/torch_reference.h"

#include <sstream>

#include "bench/torch_reference_script.h"  // kTorchReferenceScript, generated from torch_reference.py
#include "core/error.h"
#include "io/process.h"

namespace ffn::bench {

TorchRun run_torch(const std::string& python, const std::vector<std::string>& mode_and_args, std::size_t threads) {
    TorchRun run;
    if (python.empty()) {
        run.about = "not measured (--no-torch)";
        return run;
    }
    std::vector<std::string> args = {python, "-c", kTorchReferenceScript};
    args.insert(args.end(), mode_and_args.begin(), mode_and_args.end());
    const std::string n = std::to_string(threads);
    io::ProgramResult result;
    try {
        // Quiet: a Python without torch prints a traceback, which the
        // benchmark's note replaces with one line.
        result = io::run_program(args, {{"OPENBLAS_NUM_THREADS", n}, {"OMP_NUM_THREADS", n}, {"PYTHONWARNINGS", "ignore"}},
                                 /*quiet=*/true);
    } catch (const Error& e) {
        run.about = std::string("not measured: ") + e.what();
        return run;
    }
    std::istringstream lines(result.output);
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) continue;
        io::Json record = io::Json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (record.is_discarded() || !record.is_object()) continue;
        if (record.contains("torch")) {
            run.about = "PyTorch " + record.value("torch", std::string()) + ", " + record.value("blas", std::string());
        } else {
            run.records.push_back(std::move(record));
        }
    }
    if (result.status != 0) {
        run.about = python + " exited with status " + std::to_string(result.status) +
                    (run.about.empty() ? " (no torch there? Debian: python3-torch)" : " after " + run.about);
        run.records.clear();
        return run;
    }
    run.ran = true;
    return run;
}

}  // namespace ffn::bench
