#pragma once
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ffn::app {

struct SweepOptions {
    std::string config;
    std::vector<std::string> overrides;
    std::string out_dir;
    CLI::Option* out_option = nullptr;  // --out given without a folder: results/<config>/<time>/
    std::string shard;               // --shard I/N: compute only that part of the grid into --out
    std::vector<std::string> merge;  // `ffn-lab merge DIR...`: the shard folders to join (config: theirs)
    std::string shards_in;           // `ffn-lab merge --shards-in DIR`: every folder in DIR is one
    bool merging = false;            // this is `ffn-lab merge`
    std::string cache_dir;  // --cache DIR; empty: OUT/runs with --out, else none
    bool fresh = false;     // --fresh: compute every run, reusing none
    std::string save_weights;
    std::string plot_dir;
    std::optional<std::int64_t> plot_width;  // --plot-width: the width the ramps figure breaks down
    std::optional<std::uint64_t> plot_seed;  // --plot-seed: the seed drawn instead of each width's median
    std::string format;  // md, csv or json; empty: the terminal view on a terminal (or with --tty), else md
    std::vector<std::string> tables;  // print only these (all when empty)
    std::vector<std::string> columns;  // print only these columns
    bool wide = false, tty = false;
    long log_every = 0;  // --log-every N: --set log_every=N
    std::size_t threads = 0;
    bool check = false;
    bool quiet = false;
    bool print_config = false, dry_run = false;
};

CLI::App* setup_sweep(CLI::App& app, SweepOptions& options);
// `ffn-lab merge DIR...`: the sweep that the shards in DIR... computed, its
// tables printed and written (--out) as `sweep` would, every run taken
// from the shards' run caches; run_sweep runs it.
CLI::App* setup_merge(CLI::App& app, SweepOptions& options);
int run_sweep(const SweepOptions& options);

}  // namespace ffn::app
