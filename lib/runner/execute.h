#pragma once
// Running a plan: every run on a thread pool, tables joined in grid order, the
// document's expectations applied, and a manifest that says how the numbers
// were made.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "report/expect.h"
#include "report/table.h"
#include "runner/config.h"
#include "runner/experiment.h"

namespace ffn::runner {

struct ExecuteOptions {
    std::size_t threads = 0;  // 0: all hardware threads
    // Called after each finished run with (done, total), from worker threads
    // under a lock; the app draws a progress line with it.
    std::function<void(std::size_t, std::size_t)> on_progress = {};
    std::string artifacts = {};  // given to every run (sweep --save-weights DIR)
    // A folder of finished runs (runner/run_cache.h; sweep --out DIR keeps
    // DIR/runs): each run is stored as it finishes and, unless `fresh`,
    // a run found there is reused instead of computed. Runs that write
    // artifacts are always computed, since a reused run writes no files.
    std::string cache = {};
    bool fresh = false;
    std::vector<std::string> cache_also = {};  // folders of finished runs read, never written (merge's shards)
    // sweep --shard: compute (or reuse) only these runs, and join nothing:
    // the result has no tables, its manifest counts the shard's runs.
    std::optional<std::vector<std::size_t>> only = std::nullopt;
    // merge: every run must come from the cache; one missing is an error
    // naming it, not a computation.
    bool cached_only = false;
};

struct SweepResult {
    std::vector<report::Table> tables;
    report::ExpectSummary expect;
    Json manifest;
    std::string cache = {};  // the run cache used (runner::sweep), or ""
};

SweepResult execute(const Plan& plan, const ExecuteOptions& options);

}  // namespace ffn::runner
