#pragma once
// Runs another program directly, with an argument vector and no shell, so
// nothing in an argument is ever read as shell syntax.
#include <map>
#include <string>
#include <vector>

namespace ffn::io {

struct ProgramResult {
    int status = 0;      // the exit status; 128 + the signal when a signal ended it
    std::string output;  // what it wrote on stdout
};

// Runs args[0] (looked up on PATH when it has no slash) with args, this
// process's environment plus `env` (which wins), and stdin shared; its
// stderr is ours, or /dev/null when `quiet`. Throws ffn::Error when it
// cannot be started.
ProgramResult run_program(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                          bool quiet = false);

}  // namespace ffn::io
