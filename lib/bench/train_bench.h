#pragma once
// `ffn-lab bench train`: milliseconds per training step of one FFN block
// (forward, MSE loss, backward without dL/dx, Adam update), float32, the
// median over timed steps, with achieved GFLOP/s and their share of the
// machine's measured FMA peak; beside them PyTorch's time for the same step
// on the same threads, measured in the same run where a Python with torch
// is at hand.
#include <string>
#include <vector>

#include "bench/torch_reference.h"
#include "report/table.h"

namespace ffn::bench {

struct TrainBenchOptions {
    std::vector<std::string> blocks = {"relu", "gelu", "swiglu"};
    std::vector<std::size_t> threads = {1, 2};
    std::size_t d = 512, hidden = 2048, swiglu_hidden = 1365, tokens = 4096;
    int steps = 7;  // timed steps after one warm-up step
    std::string python = kDefaultPython;  // empty: no PyTorch figures
};

// The table, and in `torch_about` what PyTorch ran on (or why it did not).
std::vector<report::Table> bench_train(const TrainBenchOptions& options, std::string* torch_about = nullptr);

}  // namespace ffn::bench
