#pragma once
// `ffn-lab merge DIR...`: the sweep that the shards in DIR... computed, its
// tables printed and written (--out) as `sweep` would, every run taken from
// the shards' run caches (runner::plan_from_shards, runner::sweep).
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "results.h"

namespace ffn::app {

struct MergeOptions {
    std::vector<std::string> shards;  // every shard's --out folder
    std::string shards_in;            // --shards-in DIR: every folder in DIR is one
    std::string out_dir;
    std::string plot_dir;
    DisplayOptions display;
};

CLI::App* setup_merge(CLI::App& app, MergeOptions& options);
int run_merge(const MergeOptions& options);

}  // namespace ffn::app
