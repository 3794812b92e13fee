#include "bench/torch_reference.h"

#include <sstream>

#include "bench/torch_reference_script.h"  // kTorchReferenceScript, generated from torch_reference.py
#include "core/error.h"
#include "io/process.h"

namespace ffn::bench {

std::string text_field(const io::Json& record, const char* key) {
    const auto it = record.find(key);
    return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_field(const io::Json& record, const char* key) {
    const auto it = record.find(key);
    return it != record.end() && it->is_number() ? it->get<double>() : -1;
}

TorchRun run_torch(const std::string& python, const std::vector<std::string>& mode_and_args, std::size_t threads) {
    TorchRun run;
    if (python.empty()) {
        run.about = "not measured (--no-torch, or an empty --torch)";
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
    std::string error;
    std::istringstream lines(result.output);
    for (std::string line; std::getline(lines, line);) {
        if (line.empty()) continue;
        io::Json record = io::Json::parse(line, nullptr, /*allow_exceptions=*/false);
        if (record.is_discarded() || !record.is_object()) continue;
        if (record.contains("error")) {
            error = text_field(record, "error");
        } else if (record.contains("torch")) {
            run.about = "PyTorch " + text_field(record, "torch") + ", " + text_field(record, "blas");
        } else {
            run.records.push_back(std::move(record));
        }
    }
    if (result.status != 0) {
        run.about = python + " exited with status " + std::to_string(result.status) +
                    (!error.empty()        ? ": " + error
                     : run.about.empty()   ? " (no torch there? Debian: python3-torch)"
                                           : " after " + run.about);
        run.records.clear();
        return run;
    }
    run.ran = true;
    return run;
}

}  // namespace ffn::bench
