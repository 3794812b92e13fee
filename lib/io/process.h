#pragma once
// Runs another program directly, with an argument vector and no shell, so
// nothing in an argument is ever read as shell syntax.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace ffn::io {

// A program running beside this one, fed lines on its stdin and read line by
// line from its stdout: args[0] (looked up on PATH when it has no slash)
// with args, this process's environment plus `env` (which wins); its stderr
// is ours, or /dev/null when `quiet`. Throws ffn::Error when it cannot be
// started. Destroyed before finish(), it is killed and reaped: no orphan
// outlives an error.
//
// A program that neither writes nor ends for child_timeout() seconds is
// killed, and the read or the wait that was waiting for it throws
// ffn::Error naming it: a gnuplot or an sbatch that hangs never hangs
// ffn-lab.
class Coprocess {
public:
    Coprocess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {}, bool quiet = false);
    ~Coprocess();
    Coprocess(const Coprocess&) = delete;
    Coprocess& operator=(const Coprocess&) = delete;

    // False when the program no longer reads (it has ended).
    bool write_line(const std::string& line);
    // The next line without its newline; nullopt once its output has ended
    // (or passed 64 MiB, when it is killed: a program that never stops
    // writing must not fill the memory).
    std::optional<std::string> read_line();
    // Closes its stdin (it sees the end of its input).
    void close_input();
    // Closes its stdin, reads what is left of its output and waits for it:
    // its exit status, 128 + the signal when a signal ended it.
    int finish(std::string* rest_of_output = nullptr);
    // Kills it and waits for it without reading on (a grandchild may hold
    // its stdout open): for a program that has failed or will not stop.
    int terminate();

private:
    bool fill();  // reads more output into buffer_; false at its end
    int wait(bool killed = false);  // reaps it: its status (killed: SIGKILL sent, so wait without a limit)
    [[noreturn]] void stop_silent();  // kills it for its silence and throws

    std::string name_;
    pid_t pid_ = -1;
    int in_fd_ = -1, out_fd_ = -1;
    std::string buffer_;
    std::size_t total_ = 0;
};

// How long a child program may go without a word or an exit: 120 s, or
// $FFNLAB_CHILD_TIMEOUT seconds (a whole number from 1 to 86400; anything
// else is refused), for tests and for slow clusters.
int child_timeout();

// Whether `program` can be run: a path to an executable file, or a name
// found on $PATH. Checked before work that would need it.
bool program_exists(const std::string& program);

struct ProgramResult {
    int status = 0;      // the exit status; 128 + the signal when a signal ended it
    std::string output;  // what it wrote on stdout
};

// Runs a program to its end with nothing on its stdin.
ProgramResult run_program(const std::vector<std::string>& args, const std::map<std::string, std::string>& env = {},
                          bool quiet = false);

}  // namespace ffn::io
