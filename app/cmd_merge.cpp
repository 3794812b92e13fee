#include "cmd_merge.h"

#include <iostream>

#include "core/error.h"
#include "experiments/registry.h"
#include "experiments/support/plot.h"
#include "runner/shard.h"
#include "runner/sweep.h"

namespace ffn::app {

CLI::App* setup_merge(CLI::App& app, MergeOptions& o) {
    auto* cmd = app.add_subcommand("merge", "Join the folders of `sweep --shard I/N` into the whole sweep's tables");
    cmd->add_option("shards", o.shards, "Every shard's --out folder");
    cmd->add_option("--shards-in", o.shards_in,
                    "A folder whose every subfolder is a shard (as `ffn-lab slurm` lays them out): no list to pass, "
                    "however many parts");
    cmd->add_option("-o,--out", o.out_dir, "Write the tables and manifest here, as sweep --out does");
    add_display_options(cmd, o.display, Printed::tables, "model.width,rmse_median");
    cmd->add_option("--plot", o.plot_dir, "Write the experiment's figures here");
    return cmd;
}

int run_merge(const MergeOptions& o) {
    std::vector<std::string> shards = o.shards;
    if (!o.shards_in.empty()) {
        const auto found = runner::shard_folders_in(o.shards_in);
        shards.insert(shards.end(), found.begin(), found.end());
    }
    if (shards.empty()) throw Error("merge: name the shard folders, or give --shards-in DIR");
    check_display(o.display);
    std::vector<std::string> caches;
    const runner::Plan plan = runner::plan_from_shards(shards, experiments::all_kinds(), caches);
    if (!o.plot_dir.empty() && plan.kind->plot) experiments::plot::require_gnuplot();
    const runner::SweepResult result =
        runner::sweep(plan, {.out = o.out_dir,
                             .plot = o.plot_dir,
                             .shard_caches = caches,
                             .shard_folders = shards,
                             .warn = [&](const std::string& line) { std::cerr << plan.source << ": " << line << "\n"; }});
    return print_results(plan, result, o.display);
}

}  // namespace ffn::app
