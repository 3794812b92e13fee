#pragma once
// How long a plan will take, before it runs (sweep --dry-run), from a cost
// model: the kind's cost of each run (ExperimentKind::cost: steps x
// samples x units and the like; 1 a run for a kind without one), times
// this machine's seconds per unit of cost for that kind.
//
// That speed is kept per kind, config name, kernel family, thread count and ffn-lab
// version in the user's cache ($XDG_CACHE_HOME/ffn-lab/speeds.json, or
// ~/.cache/...; FFNLAB_SPEEDS names another file). Every sweep that
// computes its runs (none reused) for at least a second stores what it
// measured, so the estimate follows the machine; a kind never run here is
// calibrated once by probes (a sample of the plan's work units run for a
// few steps; for a kind that trains nothing, the sample run as it is),
// stored the same way. A plan whose steps are swept cannot be probed: it
// has no estimate until a sweep of its kind has run. Two estimates of one plan therefore
// agree, and an estimate costs no training once the kind is calibrated.
#include <cstddef>
#include <string>
#include <vector>

#include "runner/config.h"

namespace ffn::runner {

// One line: "estimated time: about 3.1 s (...)", saying where the speed
// came from, or why there is no estimate. `cached` (empty, or a flag per
// run): runs a cache already holds, which cost nothing and are left out.
// A speed measured by probes is kept in the store when `keep_probed`
// (ffn-lab bench estimate); a dry run writes nothing, and probes again.
std::string estimate_time(const Plan& plan, std::size_t threads, const std::vector<bool>& cached = {}, bool keep_probed = true);

// Stores the speed a finished sweep measured, from its manifest (wall
// seconds, threads, runs computed). Sweeps shorter than a second, or that
// reused runs, teach nothing and are skipped; a store that cannot be
// written is skipped too (an estimate is advice).
void record_speed(const Plan& plan, const Json& manifest);

// The file speeds are kept in.
std::string speeds_file();

}  // namespace ffn::runner
