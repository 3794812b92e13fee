#pragma once
// One error type for everything a user can get wrong. The message is the whole
// line the user sees ("configs/x.json: key 'model.widht': unknown key ..."),
// and the exit code follows GNU diff: 2 for bad usage or input.
#include <stdexcept>
#include <string>

namespace ffn {

enum class ExitCode : int { ok = 0, check_failed = 1, bad_input = 2 };

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message, ExitCode code = ExitCode::bad_input)
        : std::runtime_error(message), code_(code) {}
    ExitCode code() const { return code_; }

private:
    ExitCode code_;
};

}  // namespace ffn
