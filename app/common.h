#pragma once
// What the subcommands share: where the ffn-lab checkout is, and the terminal
// progress line.
#include <chrono>
#include <cstddef>
#include <string>

namespace ffn::app {

// --root when given; else the nearest of the working folder and its parents
// that holds configs/ and experiments/ (an ffn-lab checkout); else empty.
// Never the folder the binary sits in or was built from: a command run
// outside a checkout must not read or write another one. (The bundled
// configs travel inside the binary: io/bundle.h.)
std::string find_root(const std::string& given);

// The config file `given` names: itself when it is a file; else, for a
// plain name ("width_quick", "smoke/width_small.json"), that config of the
// checkout find_root finds, or outside one the binary's built-in copy.
// Throws ffn::Error naming the paths tried.
std::string resolve_config(const std::string& given);
// The checkout's configs/ folder, or "" outside a checkout: the runner then
// reads the configs built into the binary (runner::find_bundled_config).
std::string bundled_configs();

// Characters per line of the terminal on stdout: $COLUMNS when it is a
// positive number (so a test or a script can fix it), else what the
// terminal says, else 80.
std::size_t terminal_width();

// On Ctrl-C (SIGINT) or SIGTERM: removes the folder of carried files
// (io/bundle.h) and ends by the signal (the shell's 130 or 143). Set once,
// first thing.
void end_on_signals();

// From then on, the line the signal writes on stderr first: a sweep says
// what it kept.
void say_on_interrupt(const std::string& message);

// Draws "runs 3/50, 1.2 s elapsed, ETA 3.4 s" on stderr after the first
// second (short runs stay silent): redrawn in place on a terminal; into a
// pipe or a log, a line every kLogSeconds and one at the end.
class Progress {
public:
    static constexpr double kLogSeconds = 10;
    explicit Progress(bool enabled);
    ~Progress();
    void update(std::size_t done, std::size_t total);

private:
    bool enabled_, terminal_;
    bool drawn_ = false, ended_ = false;
    double last_line_ = 0;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace ffn::app
