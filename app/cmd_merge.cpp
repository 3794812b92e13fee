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
    cmd->add_option("--table", o.display.tables, "Print only this table (repeatable); files under --out keep all");
    cmd->add_option("-f,--format", o.display.format, "stdout format (default: aligned columns on a terminal, md elsewhere)")
        ->check(CLI::IsMember({"md", "csv", "json"}));
    cmd->add_option("--columns", o.display.columns, "Print only these columns: --columns model.width,rmse_median")->delimiter(',');
    cmd->add_flag("--wide", o.display.wide, "On a terminal: every column, however long the lines");
    cmd->add_flag("--tty", o.display.tty, "Print as on a terminal (aligned, fitted to $COLUMNS) even into a pipe");
    cmd->add_option("--plot", o.plot_dir, "Write the experiment's figures here");
    cmd->add_flag("--check", o.display.check, "Exit 1 when any verdict column says miss");
    cmd->add_flag("-q,--quiet", o.display.quiet, "No summary on stderr");
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
