#include "cmd_sweep.h"

#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include "common.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "experiments/support/plot.h"
#include "report/text.h"
#include "runner/estimate.h"
#include "runner/output_set.h"
#include "runner/run_cache.h"
#include "runner/sweep.h"

namespace ffn::app {

CLI::App* setup_sweep(CLI::App& app, SweepOptions& o) {
    auto* cmd = app.add_subcommand("sweep", "Run every point of a config's grid and print its tables");
    cmd->add_option("config,-c,--config", o.config, "JSON config file (-c optional)")->required();
    cmd->add_option("--set", o.overrides, "Override a key: --set model.width=8 (repeatable)");
    const auto not_empty = [](const std::string& path) { return path.empty() ? std::string("an empty path") : std::string(); };
    o.out_option = cmd->add_option("-o,--out", o.out_dir,
                                   "Also write NAME.md/.csv/.json per table and manifest.json here, the folder replaced as "
                                   "a whole (no folder: results/CONFIG/UTC-TIME/)")
                       ->expected(0, 1)
                       ->check(not_empty);
    cmd->add_option("--cache", o.cache_dir,
                    "Keep each finished run here and reuse the runs found here: a rerun computes only what is "
                    "missing (default with --out: OUT/runs)")
        ->check(not_empty);
    cmd->add_flag("--fresh", o.fresh, "Compute every run, reusing none from the run cache (it is still written)");
    cmd->add_option("--shard", o.shard,
                    "Compute only the I-th of N parts of the grid (balanced by cost) into --out DIR; `ffn-lab merge` "
                    "joins the parts")
        ->check(not_empty);
    cmd->add_option("--save-weights", o.save_weights,
                    "Save each run's initial and final model and its data as safetensors here (training kinds)")
        ->check(not_empty);
    cmd->add_option("--plot", o.plot_dir, "Write the experiment's figures here, each as SVG and PNG (kinds that draw any)")->check(not_empty);
    cmd->add_option("--plot-width", o.plot_width, "With --plot: the width whose fit the ramps figure breaks into units");
    // Checked as typed: CLI11 would wrap "-1" round to 2^64 - 1.
    const auto seed_text = [](const std::string& text) {
        return !text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string::npos
                   ? std::string()
                   : "expected a seed, an integer from 0 to 10^19 - 1, got '" + text + "'";
    };
    cmd->add_option("--plot-seed", o.plot_seed, "With --plot: draw this seed of every width (default: each width's median)")
        ->check(seed_text);
    add_display_options(cmd, o.display, Printed::tables, "model.width,rmse_median");
    cmd->add_option("-t,--threads", o.threads, "Worker threads (0: all cores)")->check(CLI::Range(0, 1024));
    cmd->add_flag("--print-config", o.print_config,
                  "Print the config as it would run (bases merged, overrides applied) as JSON, and run nothing");
    cmd->add_flag("--dry-run", o.dry_run,
                  "Print the config as it would run, the swept keys, the number of runs and the time the ones not "
                  "cached would take (from this machine's measured speed); write nothing (--print-config gives the JSON alone)");
    cmd->add_option("--log-every", o.log_every, "Record the training loss every N steps (the same as --set log_every=N)")
        ->check(CLI::Range(1L, 10000000L));
    return cmd;
}

namespace {
// The runs the sweep's cache already holds, for the dry run's estimate: a
// folder that is not there holds none.
std::vector<bool> cached_runs(const runner::Plan& plan, const SweepOptions& o) {
    if (o.fresh) return {};
    // Without its key no entry could be authenticated, and a dry run makes
    // none; a key the sweep would refuse (or no place for one), or a
    // folder it could not name, is the sweep's error to give.
    try {
        const std::string folder = runner::run_cache_folder(o.cache_dir, o.out_dir);
        std::error_code ec;
        if (folder.empty() || !std::filesystem::is_directory(folder, ec)) return {};
        if (!std::filesystem::is_regular_file(runner::cache_key_path(), ec)) return {};
        const runner::RunCache cache(folder);
        std::vector<bool> cached(plan.runs.size());
        for (std::size_t i = 0; i < plan.runs.size(); ++i) cached[i] = cache.holds(plan.kind->name, plan.runs[i]);
        return cached;
    } catch (const Error&) {
        return {};
    }
}
}  // namespace

int run_sweep(const SweepOptions& o) {
    std::vector<runner::Override> overrides;
    for (const auto& s : o.overrides) overrides.push_back(runner::parse_override(s));
    if (o.log_every > 0) overrides.push_back(runner::parse_override("log_every=" + std::to_string(o.log_every)));
    const std::string config_path = resolve_config(o.config);  // a bundled config may be named: sweep width_quick
    const auto plan = runner::make_plan(runner::load_config(config_path, bundled_configs()), config_path, overrides, experiments::all_kinds());
    const std::string& config = plan.source;  // as messages name it
    if (o.print_config) {
        std::cout << plan.config.dump(2) << "\n";
        return 0;
    }
    if (o.dry_run) {
        std::cout << plan.config.dump(2) << "\n";
        std::string swept;
        for (const auto& k : plan.swept_keys) swept += (swept.empty() ? "" : ", ") + k;
        std::cout << fmt::format("{}: experiment '{}', {} ({}{}{})\n", config, plan.kind->name, report::counted(plan.runs.size(), "run"),
                                 report::counted(plan.seeds.size(), "seed"), swept.empty() ? "" : "; swept: ", swept);
        std::cout << runner::estimate_time(plan, o.threads, cached_runs(plan, o), /*keep_probed=*/false) << "\n";
        return 0;
    }
    check_display(o.display);
    Progress progress(!o.display.quiet);
    const auto on_progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
    if (!o.shard.empty()) {
        if (!o.plot_dir.empty() || !o.display.tables.empty() || !o.display.format.empty() || !o.display.columns.empty())
            throw Error("--shard: a part has no tables to print or draw; ffn-lab merge prints and draws the whole sweep's");
        if (!o.cache_dir.empty()) throw Error("--shard: its runs go to --out DIR/runs, which merge reads; leave out --cache");
        const auto part = runner::sweep_shard(plan, {o.out_dir, o.shard, o.save_weights, o.fresh, o.threads, on_progress});
        if (!o.display.quiet)
            std::cerr << fmt::format("{}: shard {}/{}: {} of {} ({} computed, {} reused) in {}; ffn-lab merge joins the shards\n",
                                     config, part.shard.index, part.shard.count, part.runs, report::counted(plan.runs.size(), "run"),
                                     part.manifest.value("runs_computed", 0), part.manifest.value("runs_reused", 0), part.cache);
        return 0;
    }
    if (!o.plot_dir.empty() && plan.kind->plot) experiments::plot::require_gnuplot();
    // --out with no folder: Hydra's results/<config>/<UTC time>/.
    const bool default_out = o.out_option && o.out_option->count() > 0 && o.out_dir.empty();
    const std::string out = default_out ? runner::default_output_folder(config_path) : o.out_dir;
    if (default_out)  // the same command would write a new folder
        say_on_interrupt(fmt::format("{}: interrupted; the runs that finished are kept in {}, and --out {} computes only the rest",
                                     config, runner::run_cache_folder(o.cache_dir, out), out));
    else if (!out.empty() || !o.cache_dir.empty())
        say_on_interrupt(fmt::format("{}: interrupted; the runs that finished are kept in {}, and the same command computes only "
                                     "the rest",
                                     config, runner::run_cache_folder(o.cache_dir, out)));
    else
        say_on_interrupt(config + ": interrupted; nothing was kept (--out DIR keeps each finished run, to resume from)");
    const runner::SweepResult result = runner::sweep(plan, {.out = out,
                                                            .new_out = default_out,
                                                            .cache = o.cache_dir,
                                                            .fresh = o.fresh,
                                                            .save_weights = o.save_weights,
                                                            .plot = o.plot_dir,
                                                            .plot_choice = {o.plot_width, o.plot_seed},
                                                            .threads = o.threads,
                                                            .on_progress = on_progress,
                                                            .warn = [&](const std::string& line) { std::cerr << config << ": " << line << "\n"; }});
    if (!o.display.quiet && result.manifest.value("runs_reused", 0) > 0)
        std::cerr << fmt::format("{}: {} of {} reused from {} (--fresh computes them all)\n", config,
                                 result.manifest.value("runs_reused", 0), report::counted(plan.runs.size(), "run"), result.cache);
    if (!o.display.quiet && default_out) std::cerr << config << ": tables written to " << out << "\n";
    if (!o.display.quiet && !o.plot_dir.empty()) std::cerr << config << ": figures written to " << o.plot_dir << "\n";
    return print_results(plan, result, o.display);
}

}  // namespace ffn::app
