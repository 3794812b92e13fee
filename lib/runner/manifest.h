#pragma once
// What a result set's manifest.json and a shard's shard.json record of a
// run of a plan: the config as it ran, the build and kernel family that ran
// it, and how its runs went. One writer, so that the two agree on every key
// they share.
#include <cstddef>
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"

namespace ffn::runner {

// How one call of execute went.
struct RunCounts {
    std::size_t runs = 0;        // this call's (a shard's part, or the whole plan)
    std::size_t reused = 0;      // taken from the run cache (runner/run_cache.h)
    std::size_t rejected = 0;    // cache entries found but not authentic: computed again
    std::size_t not_cached = 0;  // computed but not kept in the cache (a full disk)
    std::size_t threads = 0;
    std::string started_utc;
    double wall_seconds = 0;
};

// The keys every record holds: experiment, config_file, config, overrides,
// the build (ffn_lab_version, git_commit, build_type), gemm_isa, threads,
// the run counts, started_utc and wall_seconds.
Json run_record(const Plan& plan, const RunCounts& counts);

// A sweep's manifest: run_record, with every point's resolved values and
// the seeds (each run is a point and a seed, so a single run can be
// reproduced from the manifest alone, which stays as small as the grid
// however many seeds it has), and the verdict counts of its tables (what
// `ffn-lab results` lists without reading them).
Json sweep_manifest(const Plan& plan, const RunCounts& counts, const std::vector<report::Table>& tables);

// The time now, as the records write it: 2026-12-06T21:30:00Z.
std::string utc_now();

}  // namespace ffn::runner
