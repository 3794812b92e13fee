#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ffn::app {

// `ffn-lab slurm`: a sweep as a Slurm job array, one `sweep --shard I/N`
// per task, and a merge job that waits for the array (afterok).
struct SlurmOptions {
    std::string config;
    std::vector<std::string> overrides;
    std::string out_dir;  // OUT/slurm (scripts, logs), OUT/shards/I, OUT/tables (the merged sweep)
    std::size_t shards = 0;
    std::string partition, time, mem;
    std::size_t cpus_per_task = 1;
    bool submit = false;
};

CLI::App* setup_slurm(CLI::App& app, SlurmOptions& options);
int run_slurm(const SlurmOptions& options);

}  // namespace ffn::app
