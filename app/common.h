#pragma once
// What the subcommands share: where the ffn-lab checkout is, and the terminal
// progress line.
#include <chrono>
#include <cstddef>
#include <string>

namespace ffn::app {

// --root when given; else the working folder when it holds configs/ and
// experiments/; else the source folder this binary was built from.
std::string find_root(const std::string& given);

// Draws "runs 3/50, 1.2 s elapsed, ETA 3.4 s" on stderr, only when stderr is
// a terminal and only after the first second (short runs stay silent).
class Progress {
public:
    explicit Progress(bool enabled);
    ~Progress();
    void update(std::size_t done, std::size_t total);

private:
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_;
};

}  // namespace ffn::app
