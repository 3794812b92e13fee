#pragma once
// `bench scale`: what a sweep of many runs costs besides its training, for
// 10^4, 10^5 and 10^6 runs of a tiny config (its seeds widened): wall time
// and peak memory of the sweep into an --out folder, of the same sweep
// with no training step (the runner's and the analysis' share), and of
// its --dry-run plan; and the run cache's bytes per run on disk. Each
// measurement runs in a child process of its own, so that its peak memory
// is its own (wait4's maximum resident set).
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/experiment.h"

namespace ffn::bench {

struct ScaleBenchOptions {
    std::string config = "configs/smoke/width_small.json";
    std::vector<std::size_t> runs = {10000, 100000, 1000000};
    long steps = 20;           // the config's 'steps' for the timed sweep
    std::size_t threads = 0;   // 0: all cores
    std::string folder;        // scratch for the --out folders; empty: a temporary folder
};

report::Table bench_scale(const ScaleBenchOptions& options, const std::vector<runner::ExperimentKind>& kinds);

}  // namespace ffn::bench
