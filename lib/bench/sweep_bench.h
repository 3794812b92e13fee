#pragma once
// `bench sweep`: a whole plan run repeatedly per thread count, its wall
// time per training step, the share of the FMA peak its counted operations
// reach, and PyTorch's time per step for the same nets in the same run
// (for kinds that name their nets: ExperimentKind::torch_nets).
#include <string>
#include <vector>

#include "bench/torch_reference.h"
#include "report/table.h"
#include "runner/config.h"

namespace ffn::bench {

struct SweepBenchOptions {
    std::string config = "configs/width.json";
    std::vector<std::size_t> threads;  // empty: one thread and all cores
    int repeats = 5;
    std::string python = kDefaultPython;  // empty: no PyTorch figures
};

// One row per thread count; `torch_about` says which PyTorch was timed, or
// why none.
report::Table bench_sweep(const runner::Plan& plan, const SweepBenchOptions& options, std::string* torch_about);

}  // namespace ffn::bench
