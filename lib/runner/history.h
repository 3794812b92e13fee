#pragma once
// The result folders a user has (`ffn-lab results`, like `dvc exp show`):
// every folder under the given roots that a sweep wrote with --out, read
// from its manifest alone, as one table.
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"
#include "runner/experiment.h"

namespace ffn::runner {

// A row per result folder found under `roots` (each a result folder
// itself or a folder to search; symlinks are not followed), oldest first:
// its path, experiment, config file, overrides, git commit, start time,
// wall seconds, runs (and how many were computed rather than reused) and
// verdict counts (empty for a folder written before manifests held them).
// A root that does not exist is an ffn::Error; a folder whose manifest is
// not ffn-lab's is not a row. With `kinds`, a `headline` column too: the
// first of the kind's headline tables the folder holds (else its first
// table of a few rows), and in it the first real (else integer) column
// that does not name rows, down the rows ("width.rmse_median: 0.6221,
// 0.2251, ..."). Then a column per key of the config as run (config/lr,
// config/sweep/model.width) whose value differs between the folders, as
// `dvc exp show` shows what varied, and each key named in `also` (from
// --columns) whether it varied or not. A folder holding a manifest.json
// that cannot be read as one is no row either; with `unreadable`, its path
// is added there, for the caller to say.
report::Table result_folders(const std::vector<std::string>& roots, const std::vector<ExperimentKind>* kinds = nullptr,
                             const std::vector<std::string>& also = {}, std::vector<std::string>* unreadable = nullptr);

// How two result folders' manifests differ in what ran and how (`diff A B`
// of two folders): a row per key whose values differ, among the
// experiment, the config file, every key of the config as run (a path such
// as config/sweep/model.width), the overrides, the build (version, commit,
// build type, kernel family), the threads, the seeds and the run count;
// values as compact JSON, "(none)" where a side lacks the key. Times and
// file lists, which differ between any two sweeps, are left out. Columns:
// key, A, B.
report::Table manifest_differences(const Json& a, const Json& b);

}  // namespace ffn::runner
