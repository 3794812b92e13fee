#pragma once
// `sweep --shard I/N` and `merge`: a plan's runs cut into N disjoint parts
// that separate processes (GNU parallel, a Slurm array) compute into their
// own run caches, and joined again into the tables one process would
// have written. The parts are balanced by the kind's cost estimate
// (ExperimentKind::cost), not by count: a width-32 net costs sixteen
// width-2 ones. Assignment is greedy, largest first (each run to the part
// with the least cost so far), and depends on the plan alone. A kind that
// trains seeds together (run_batch) is cut between its batches, never
// inside one.
#include <cstddef>
#include <string>
#include <vector>

#include "runner/config.h"

namespace ffn::runner {

struct Shard {
    std::size_t index = 1, count = 1;  // the index-th of count, from 1
};

// "2/8" -> {2, 8}; throws ffn::Error naming the text otherwise.
Shard parse_shard(const std::string& text);

// The indices of the plan's runs in `shard`, in grid order.
std::vector<std::size_t> shard_runs(const Plan& plan, Shard shard);

// What a shard records of its plan, and merge compares: the kind, the
// config as run and the build (run_cache.h's build_identity), hashed.
std::string plan_fingerprint(const Plan& plan);

// DIR/shard.json, the one record of a part: which part of which sweep,
// and the ids of its runs. Written last by `sweep --shard` (a folder
// without it is no shard yet), read by merge and by a rerun of the part.
struct ShardRecord {
    Shard shard;
    std::string config_file, fingerprint;
    Json config;                   // the config as run
    std::vector<std::string> overrides;  // its --set texts, as given (for the merged manifest)
    std::vector<std::string> runs;  // the part's run ids, in grid order
};

// Reads DIR/shard.json. Throws ffn::Error naming the file for one that is
// missing, does not parse, or was not written by this format of ffn-lab.
ShardRecord read_shard_record(const std::string& dir);

// Writes DIR/shard.json for `shard` of `plan`, atomically: the part's run
// ids and `record`, what execute recorded of the part (runner/manifest.h:
// the config, the build, the runs computed and reused, the wall time).
void write_shard_record(const std::string& dir, const Plan& plan, Shard shard, const std::vector<std::size_t>& runs,
                        const Json& record);

// merge --shards-in DIR: every folder in DIR but hidden ones (a killed
// part's staging folder is one), in part order (2 before 10). Throws
// ffn::Error for a missing or empty DIR.
std::vector<std::string> shard_folders_in(const std::string& dir);

// The plan the shards in `dirs` ran, after checking that they are the N
// parts of one plan, each once: `caches` gets their run folders (in part
// order). Every defect names the folders.
Plan plan_from_shards(const std::vector<std::string>& dirs, const std::vector<ExperimentKind>& kinds,
                      std::vector<std::string>& caches);

}  // namespace ffn::runner
