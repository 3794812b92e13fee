#pragma once
// `ffn-lab sweep`: parses the command line into runner::sweep's request
// (runner/sweep.h holds every rule about the folders it writes) and prints
// what it returns (results.h).
#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "results.h"

namespace ffn::app {

struct SweepOptions {
    std::string config;
    std::vector<std::string> overrides;
    std::string out_dir;
    CLI::Option* out_option = nullptr;  // --out given without a folder: results/<config>/<time>/
    std::string shard;                  // --shard I/N: compute only that part of the grid into --out
    std::string cache_dir;              // --cache DIR; empty: OUT/runs with --out, else none
    bool fresh = false;                 // --fresh: compute every run, reusing none
    std::string save_weights;
    std::string plot_dir;
    std::optional<std::int64_t> plot_width;  // --plot-width: the width the ramps figure breaks down
    std::optional<std::uint64_t> plot_seed;  // --plot-seed: the seed drawn instead of each width's median
    DisplayOptions display;
    long log_every = 0;  // --log-every N: --set log_every=N
    std::size_t threads = 0;
    bool print_config = false, dry_run = false;
};

CLI::App* setup_sweep(CLI::App& app, SweepOptions& options);
int run_sweep(const SweepOptions& options);

}  // namespace ffn::app
