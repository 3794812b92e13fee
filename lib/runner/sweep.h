#pragma once
// `ffn-lab sweep` and `ffn-lab merge` below their command lines: one plan
// run into the places the user named. The folder rules (runner::OutputSet:
// what ffn-lab owns in --out), the run cache beside it, weights and
// figures inside or outside the set, all decided here and before any work,
// so that a bad folder costs no computation and no command file holds a
// policy.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "runner/config.h"
#include "runner/execute.h"
#include "runner/experiment.h"
#include "runner/shard.h"

namespace ffn::runner {

struct SweepRequest {
    std::string out;           // --out DIR; "" for none
    // True for --out with no folder (default_output_folder): `out` must not
    // exist yet, and is made here, so that no other sweep's set is replaced.
    bool new_out = false;
    std::string cache;         // --cache DIR; "": OUT/runs with --out, else none
    bool fresh = false;        // compute every run, reusing none
    std::string save_weights;  // --save-weights DIR
    std::string plot;          // --plot DIR
    PlotChoice plot_choice;    // --plot-width, --plot-seed
    std::size_t threads = 0;
    // merge: the shards' run folders, read and never written; every run
    // must come from them.
    std::vector<std::string> shard_caches = {};
    std::vector<std::string> shard_folders = {};  // as named, for the manifest
    std::function<void(std::size_t, std::size_t)> on_progress = {};
    // A line the user should see (a run that could not be cached, files
    // found in --out while it ran), with what wrote it.
    std::function<void(const std::string&)> warn = {};
};

// Where --out given without a folder writes, and what `ffn-lab results`
// lists when it is given none.
inline constexpr const char* kResultsFolder = "results";

// --out given without a folder: Hydra's results/<config name>/<UTC time>/,
// or <UTC time>-2, -3 ... where a sweep of the same second has that one.
std::string default_output_folder(const std::string& config_file);

// Checks what `request` asks of `plan` (the plot choice, weights from a kind
// that trains nothing...), holds and judges the --out folder, runs the plan
// and writes the set (every table as md, csv and json, the manifest) and the
// figures. Throws ffn::Error before any work for a request the plan cannot
// meet.
SweepResult sweep(const Plan& plan, const SweepRequest& request);

// `sweep --shard I/N --out DIR`: this part's runs into DIR/runs, then
// DIR/shard.json, which merge reads (written last: a folder without it is
// no shard yet). One writer per part's folder, and nothing in it but a
// part's files.
struct ShardRequest {
    std::string out;    // as the user typed it
    std::string shard;  // "I/N"
    std::string save_weights;
    bool fresh = false;
    std::size_t threads = 0;
    std::function<void(std::size_t, std::size_t)> on_progress = {};
};
struct ShardResult {
    Shard shard;
    std::size_t runs = 0;  // of this part
    std::string cache;     // where they are
    Json manifest;
};
ShardResult sweep_shard(const Plan& plan, const ShardRequest& request);

}  // namespace ffn::runner
