#include "bench/torch_reference.h"

#include "bench/torch_reference_script.h"  // kTorchReferenceScript, generated from torch_reference.py
#include "core/error.h"

namespace ffn::bench {

std::string text_field(const io::Json& record, const char* key) {
    const auto it = record.find(key);
    return it != record.end() && it->is_string() ? it->get<std::string>() : std::string();
}

double number_field(const io::Json& record, const char* key) {
    const auto it = record.find(key);
    return it != record.end() && it->is_number() ? it->get<double>() : -1;
}

TorchSession::TorchSession(const std::string& python, const std::vector<std::string>& mode_and_args, std::size_t threads)
    : python_(python) {
    if (python.empty()) {
        about_ = "not measured (--no-torch, or an empty --torch)";
        return;
    }
    std::vector<std::string> args = {python, "-c", kTorchReferenceScript};
    args.insert(args.end(), mode_and_args.begin(), mode_and_args.end());
    const std::string n = std::to_string(threads);
    try {
        // Quiet: a Python without torch prints a traceback, which the
        // benchmark's note replaces with one line. Passive OpenMP threads,
        // and OpenBLAS's asleep after 2^4 cycles idle (its default, 2^28,
        // is a tenth of a second): while ffn-lab takes its turn, PyTorch's
        // threads must not spin on a core it needs.
        program_ = std::make_unique<io::Coprocess>(
            args,
            std::map<std::string, std::string>{
                {"OPENBLAS_NUM_THREADS", n}, {"OPENBLAS_THREAD_TIMEOUT", "4"}, {"OMP_NUM_THREADS", n},
                {"OMP_WAIT_POLICY", "PASSIVE"}, {"PYTHONWARNINGS", "ignore"}},
            /*quiet=*/true);
    } catch (const Error& e) {
        about_ = std::string("not measured: ") + e.what();
        return;
    }
    const auto header = next_record();
    if (!header) return;
    if (!header->contains("torch")) {
        fail("its first line names no torch");
        return;
    }
    about_ = "PyTorch " + text_field(*header, "torch") + ", " + text_field(*header, "blas");
    header_seen_ = true;
}

void TorchSession::fail(const std::string& why, std::optional<int> exit_status) {
    if (!program_) return;
    const int status = exit_status ? *exit_status : program_->terminate();
    program_.reset();
    const std::string before = header_seen_ ? " after " + about_ : std::string();
    about_ = python_ + (status != 0 ? " exited with status " + std::to_string(status) : std::string(" stopped"));
    about_ += why.empty() ? before : ": " + why;
}

std::optional<io::Json> TorchSession::next_record() {
    while (program_) {
        const auto line = program_->read_line();
        if (!line) {  // its output has ended: a batch mode's normal end, or a failure
            const int status = program_->finish();
            if (header_seen_ && status == 0 && !serving_) {
                program_.reset();
                ended_cleanly_ = true;
            } else {
                fail(!header_seen_ ? "no torch there? (Debian: python3-torch)"
                     : serving_    ? "it ended before answering"
                                   : "",
                     status);
            }
            break;
        }
        io::Json record = io::Json::parse(*line, nullptr, /*allow_exceptions=*/false);
        if (record.is_discarded() || !record.is_object()) continue;  // not the script's: a library's print
        if (record.contains("error")) {  // the script's last line: it exits after it
            fail(text_field(record, "error"), program_->finish());
            break;
        }
        return record;
    }
    return std::nullopt;
}

std::optional<io::Json> TorchSession::ask(const std::string& request) {
    if (!program_) return std::nullopt;
    serving_ = true;
    if (!program_->write_line(request)) {
        fail("it stopped reading its requests");
        return std::nullopt;
    }
    return next_record();
}

std::vector<io::Json> TorchSession::all_records() {
    if (program_) program_->close_input();  // a batch mode reads no requests
    std::vector<io::Json> records;
    while (auto record = next_record()) records.push_back(std::move(*record));
    if (!ended_cleanly_) records.clear();
    return records;
}

}  // namespace ffn::bench
