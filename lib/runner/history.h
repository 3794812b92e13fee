#pragma once
// The result folders a user has (`ffn-lab results`, like `dvc exp show`):
// every folder under the given roots that a sweep wrote with --out, read
// from its manifest alone, as one table.
#include <string>
#include <vector>

#include "report/table.h"

namespace ffn::runner {

// A row per result folder found under `roots` (each a result folder
// itself or a folder to search; symlinks are not followed), oldest first:
// its path, experiment, config file, overrides, git commit, start time,
// wall seconds, runs (and how many were computed rather than reused) and
// verdict counts (empty for a folder written before manifests held them).
// A root that does not exist is an ffn::Error; a folder whose manifest is
// not ffn-lab's is not a row.
report::Table result_folders(const std::vector<std::string>& roots);

}  // namespace ffn::runner
