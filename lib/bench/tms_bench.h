#pragma once
// `bench tms`: the toy models of superposition's training speed, shape by
// shape of the bundled tms configs: microseconds per model and step (one
// step of one model: its batch drawn, its gradient, Adam), and models
// trained per second at the config's steps, on each thread count; beside
// them PyTorch's figure for the paper's way of training them, measured in
// the same run: one model with an instances axis holding every model of the
// config, a fresh batch per step, Adam.
#include <string>
#include <vector>

#include "bench/torch_reference.h"
#include "report/table.h"
#include "runner/config.h"

namespace ffn::bench {

struct TmsBenchOptions {
    std::vector<std::size_t> threads = {1, 2};
    int repeats = 5;
    double batch_seconds = 0.2;  // each timed batch of steps lasts about this long
    std::string python = kDefaultPython;  // empty: no PyTorch figures
};

// One row per config and thread count; `torch_about` says which PyTorch
// was timed, or why none.
report::Table bench_tms(const std::vector<std::pair<std::string, runner::Plan>>& plans, const TmsBenchOptions& options,
                        std::string* torch_about);

}  // namespace ffn::bench
