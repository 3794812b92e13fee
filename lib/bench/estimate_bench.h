#pragma once
// `bench estimate`: sweep --dry-run's estimate against the wall time of the
// sweep itself, config by config, in order, from an empty speed store (a
// file of its own, runner/estimate.h): the first config of a kind is
// estimated from probes, the later ones from the speed the sweeps before
// them measured, as a user's estimates go on a new machine.
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/experiment.h"

namespace ffn::bench {

struct EstimateBenchOptions {
    std::vector<std::string> configs;  // default: every bundled config
    std::string bundled;               // the checkout's configs folder, for `base`
    std::size_t threads = 0;           // 0: all cores
};

report::Table bench_estimate(const EstimateBenchOptions& options, const std::vector<runner::ExperimentKind>& kinds);

}  // namespace ffn::bench
