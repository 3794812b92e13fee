#include "cmd_sweep.h"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <iostream>
#include <optional>
#include <unistd.h>

#include "common.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "io/atomic_file.h"
#include "report/table_io.h"
#include "report/terminal.h"
#include "experiments/support/plot.h"
#include "runner/execute.h"
#include "runner/output_set.h"
#include "runner/run_cache.h"
#include "runner/shard.h"
#include "ffnlab/build_info.h"

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
    cmd->add_option("--plot", o.plot_dir, "Write the experiment's SVG figures here (kinds that draw any)")->check(not_empty);
    cmd->add_option("--plot-width", o.plot_width, "With --plot: the width whose fit the ramps figure breaks into units");
    // Checked as typed: CLI11 would wrap "-1" round to 2^64 - 1.
    const auto seed_text = [](const std::string& text) {
        return !text.empty() && text.size() <= 19 && text.find_first_not_of("0123456789") == std::string::npos
                   ? std::string()
                   : "expected a seed, an integer from 0 to 10^19 - 1, got '" + text + "'";
    };
    cmd->add_option("--plot-seed", o.plot_seed, "With --plot: draw this seed of every width (default: each width's median)")
        ->check(seed_text);
    cmd->add_option("--table", o.tables, "Print only this table (repeatable); files under --out keep all");
    cmd->add_option("-f,--format", o.format, "stdout format (default: aligned columns on a terminal, md elsewhere)")
        ->check(CLI::IsMember({"md", "csv", "json"}));
    cmd->add_option("--columns", o.columns, "Print only these columns: --columns model.width,rmse_median")->delimiter(',');
    cmd->add_flag("--wide", o.wide, "On a terminal: every column, however long the lines");
    cmd->add_flag("--tty", o.tty, "Print as on a terminal (aligned, fitted to $COLUMNS) even into a pipe");
    cmd->add_option("-t,--threads", o.threads, "Worker threads (0: all cores)")->check(CLI::Range(0, 1024));
    cmd->add_flag("--check", o.check,
                  "Exit 1 when any verdict column says miss (n/a, outside the document's protocol, never fails)");
    cmd->add_flag("-q,--quiet", o.quiet, "No progress line or summary on stderr");
    cmd->add_flag("--print-config", o.print_config,
                  "Print the config as it would run (bases merged, overrides applied) as JSON, and run nothing");
    cmd->add_flag("--dry-run", o.dry_run,
                  "Print the config as it would run, the swept keys, the number of runs and the time they would take "
                  "(measured on a short probe); write nothing");
    cmd->add_option("--log-every", o.log_every, "Record the training loss every N steps (the same as --set log_every=N)")
        ->check(CLI::Range(1L, 10000000L));
    return cmd;
}

namespace {

void make_output_folder(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(dir + ": cannot create the output folder (" + ec.message() + ")");
}

// The whole set (every table as md/csv/json, and the manifest) goes in at
// once: see runner::OutputSet.
void write_outputs(runner::OutputSet& out, const std::string& kind, const std::vector<report::Table>& tables,
                   const report::Json& manifest) {
    for (const auto& t : tables) {
        io::write_file_atomically(out.file(t.name() + ".md"), to_markdown(t));
        io::write_file_atomically(out.file(t.name() + ".csv"), to_csv(t));
        io::write_file_atomically(out.file(t.name() + ".json"), report::results_document(kind, {t}, nullptr).dump(2) + "\n");
    }
    out.commit(manifest);
}

// --out DIR, or with no folder named, Hydra's results/<config>/<UTC time>/.
std::string output_folder(const SweepOptions& o) {
    if (!o.out_dir.empty() || !o.out_option || o.out_option->count() == 0) return o.out_dir;
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    return (std::filesystem::path("results") / std::filesystem::path(o.config).stem() / stamp).string();
}

// A training sweep's time from a measured cost per step: a sample of the
// plan's work units (evenly spread, so every grid point's sizes are in it) run
// for s and 2s steps (probes, nothing kept), s doubled until the longer
// probe takes a quarter second, which gives a cost per step and what every
// run costs besides its steps (set-up, evaluation), scaled to the config's
// steps and to all its runs. The sample and the quarter second bound what
// the estimate costs, however many runs the sweep has.
std::string estimate_time(const runner::Plan& plan, const SweepOptions& o) {
    constexpr std::size_t kSampleUnits = 8;
    constexpr double kProbeSeconds = 0.25;
    if (!plan.kind->schema.find("steps"))
        return "estimated time: not measured (experiment '" + plan.kind->name + "' trains nothing; its runs take seconds)";
    if (std::find(plan.swept_keys.begin(), plan.swept_keys.end(), "steps") != plan.swept_keys.end())
        return "estimated time: not measured ('steps' is swept; the probes scale one number of steps)";
    const long steps = plan.runs.front().integer("steps");
    // Whole work units, so that runs batched together are timed batched.
    const auto units = runner::work_units(plan, std::vector<bool>(plan.runs.size(), true));
    std::vector<std::size_t> sample;
    for (std::size_t u = 0; u < std::min(units.size(), kSampleUnits); ++u)
        for (const std::size_t i : units[u * units.size() / std::min(units.size(), kSampleUnits)]) sample.push_back(i);
    const std::size_t n = plan.runs.size(), sampled = sample.size();
    const auto seconds_for = [&](long probe_steps) {
        // The sampled runs alone, with fewer steps: nothing of the probe
        // grows with the plan.
        runner::Plan probe;
        probe.kind = plan.kind;
        probe.source = plan.source;
        probe.seeds = plan.seeds;
        std::vector<std::size_t> all;
        for (const std::size_t i : sample) {
            runner::Run run = plan.runs[i];
            run.values["steps"] = probe_steps;
            run.index = probe.runs.size();
            all.push_back(run.index);
            probe.runs.push_back(std::move(run));
        }
        const auto start = std::chrono::steady_clock::now();
        runner::execute(probe, {.threads = o.threads, .only = all});
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    long s = std::max(1L, std::min(steps / 2, 10L));
    double t1 = seconds_for(s), t2 = seconds_for(2 * s);
    while (t2 < kProbeSeconds && 4 * s <= steps) {
        s *= 2;
        t1 = t2;
        t2 = seconds_for(2 * s);
    }
    const double scale = static_cast<double>(n) / static_cast<double>(sampled);
    const double per_step = std::max(0.0, (t2 - t1) / static_cast<double>(s)) * scale;
    const double fixed = std::max(0.0, t1 * scale - per_step * static_cast<double>(s));
    return fmt::format("estimated time: about {:.1f} s ({:.3g} ms a step for all {} runs, and {:.2f} s besides the "
                       "steps, from probes of {} and {} steps on {} of the runs)",
                       fixed + per_step * static_cast<double>(steps), per_step * 1e3, n, fixed, s, 2 * s, sampled);
}

// runner::execute with the progress line on stderr (unless quiet).
runner::SweepResult execute_with_progress(const runner::Plan& plan, runner::ExecuteOptions options, bool quiet) {
    Progress progress(!quiet);
    options.on_progress = [&](std::size_t done, std::size_t total) { progress.update(done, total); };
    return runner::execute(plan, options);
}

// sweep --shard: this part's runs into DIR/runs, and DIR/shard.json,
// which merge reads (written last: a folder without it is no shard yet).
int run_shard(const runner::Plan& plan, const SweepOptions& o) {
    if (o.out_dir.empty()) throw Error("--shard: give --out DIR, the folder for this part's runs (ffn-lab merge joins the folders)");
    if (!o.plot_dir.empty() || !o.tables.empty() || !o.format.empty() || !o.columns.empty())
        throw Error("--shard: a part has no tables to print or draw; ffn-lab merge prints and draws the whole sweep's");
    if (!o.cache_dir.empty()) throw Error("--shard: its runs go to --out DIR/runs, which merge reads; leave out --cache");
    const runner::Shard shard = runner::parse_shard(o.shard);
    const auto dir = std::filesystem::path(runner::resolve_output_path(o.out_dir, "--out"));
    // One writer per part's folder, and nothing in it but a part's files.
    const io::FolderLock lock(dir.string(), o.config + " --shard " + o.shard, [&](const std::string& holder) {
        throw Error("--out " + o.out_dir + ": being written by another ffn-lab (" + (holder.empty() ? "?" : holder) +
                    "); each shard writes to a folder of its own");
    });
    runner::check_shard_folder(dir.string());
    if (std::filesystem::exists(dir / "manifest.json"))
        throw Error("--out " + o.out_dir + ": holds a sweep's tables; a shard writes to a folder of its own");
    if (std::filesystem::exists(std::filesystem::symlink_status(dir / "shard.json"))) {
        runner::ShardRecord old;
        try {
            old = runner::read_shard_record(dir.string());
        } catch (const Error& e) {
            throw Error("--out " + o.out_dir + ": its shard.json is not one this ffn-lab wrote (" + e.what() +
                        "); write the shard to another folder");
        }
        if (old.fingerprint != runner::plan_fingerprint(plan) || old.shard.index != shard.index || old.shard.count != shard.count)
            throw Error(fmt::format("--out {}: holds shard {}/{} of {}; write shard {}/{} of {} to another folder", o.out_dir,
                                    old.shard.index, old.shard.count, old.config_file, shard.index, shard.count, o.config));
    }
    const std::string cache = (dir / "runs").string();
    make_output_folder(cache);
    const auto mine = runner::shard_runs(plan, shard);
    const runner::SweepResult result = execute_with_progress(
        plan, {.threads = o.threads, .artifacts = o.save_weights, .cache = cache, .fresh = o.fresh, .only = mine}, o.quiet);
    if (result.manifest.value("runs_not_cached", 0) > 0)
        throw Error(fmt::format("--out {}: {} of the part's runs could not be written to {}", o.out_dir,
                                result.manifest.value("runs_not_cached", 0), cache));
    runner::write_shard_record(dir.string(), plan, shard, mine, result.manifest);
    if (!o.quiet)
        std::cerr << fmt::format("{}: shard {}/{}: {} of {} runs ({} computed, {} reused) in {}; ffn-lab merge joins the shards\n",
                                 o.config, shard.index, shard.count, mine.size(), plan.runs.size(),
                                 result.manifest.value("runs_computed", 0), result.manifest.value("runs_reused", 0), cache);
    return 0;
}

}  // namespace

CLI::App* setup_merge(CLI::App& app, SweepOptions& o) {
    auto* cmd = app.add_subcommand("merge", "Join the folders of `sweep --shard I/N` into the whole sweep's tables");
    o.merging = true;
    cmd->add_option("shards", o.merge, "Every shard's --out folder");
    cmd->add_option("--shards-in", o.shards_in,
                    "A folder whose every subfolder is a shard (as `ffn-lab slurm` lays them out): no list to pass, "
                    "however many parts");
    o.out_option = cmd->add_option("-o,--out", o.out_dir, "Write the tables and manifest here, as sweep --out does");
    cmd->add_option("--table", o.tables, "Print only this table (repeatable); files under --out keep all");
    cmd->add_option("-f,--format", o.format, "stdout format (default: aligned columns on a terminal, md elsewhere)")
        ->check(CLI::IsMember({"md", "csv", "json"}));
    cmd->add_option("--plot", o.plot_dir, "Write the experiment's figures here");
    cmd->add_flag("-q,--quiet", o.quiet, "No summary on stderr");
    return cmd;
}

int run_sweep(const SweepOptions& given) {
    SweepOptions o = given;  // merge takes its config from the shards
    if (!o.shards_in.empty()) {
        std::error_code ec;
        if (!std::filesystem::is_directory(o.shards_in, ec)) throw Error("--shards-in " + o.shards_in + ": no such folder");
        std::vector<std::string> found;
        // Hidden folders are not parts: a killed part's staging folder is
        // one (io::StagedFolder).
        for (const auto& entry : std::filesystem::directory_iterator(o.shards_in, ec))
            if (entry.is_directory() && !entry.path().filename().string().starts_with("."))
                found.push_back(entry.path().string());
        if (ec) throw Error("--shards-in " + o.shards_in + ": cannot list it (" + ec.message() + ")");
        // 2 before 10: by length, then by name.
        std::sort(found.begin(), found.end(),
                  [](const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() < b.size() : a < b; });
        if (found.empty()) throw Error("--shards-in " + o.shards_in + ": no shard folders in it");
        o.merge.insert(o.merge.end(), found.begin(), found.end());
    }
    if (o.merging && o.merge.empty()) throw Error("merge: name the shard folders, or give --shards-in DIR");
    std::vector<std::string> shard_caches;
    std::optional<runner::Plan> merged;
    if (!o.merge.empty()) {
        merged = runner::plan_from_shards(o.merge, experiments::all_kinds(), shard_caches);
        o.config = merged->source;
    }
    std::vector<runner::Override> overrides;
    for (const auto& s : o.overrides) overrides.push_back(runner::parse_override(s));
    if (o.log_every > 0) overrides.push_back(runner::parse_override("log_every=" + std::to_string(o.log_every)));
    if (!merged) o.config = resolve_config(o.config);  // a bundled config may be named: sweep width_quick
    const auto plan = merged ? *merged
                             : runner::make_plan(runner::load_config(o.config, bundled_configs()), o.config, overrides, experiments::all_kinds());
    if (o.print_config) {
        std::cout << plan.config.dump(2) << "\n";
        return 0;
    }
    if (o.dry_run) {
        std::cout << plan.config.dump(2) << "\n";
        std::string swept;
        for (const auto& k : plan.swept_keys) swept += (swept.empty() ? "" : ", ") + k;
        std::cout << fmt::format("{}: experiment '{}', {} runs ({} seeds{}{})\n", o.config, plan.kind->name, plan.runs.size(),
                                 plan.seeds.size(), swept.empty() ? "" : "; swept: ", swept);
        std::cout << estimate_time(plan, o) << "\n";
        return 0;
    }
    const bool terminal = o.format.empty() && (o.tty || ::isatty(STDOUT_FILENO));
    const std::string format = o.format.empty() ? "md" : o.format;
    if (terminal && !o.columns.empty() && o.wide) throw Error("--columns and --wide: give one (--wide is every column)");
    if (o.tty && !o.format.empty()) throw Error("--tty and --format " + o.format + ": give one (--tty is the terminal view)");
    if (!terminal && o.wide) throw Error("--wide: for the terminal view; --format " + format + " prints every column");
    if (format == "csv" && o.tables.size() > 1)
        throw Error("--format csv: one table per stream; give one --table (--out writes them all)");
    if (!o.plot_dir.empty() && !plan.kind->plot)
        throw Error("--plot: experiment '" + plan.kind->name + "' draws no figures");
    if ((o.plot_width || o.plot_seed) && o.plot_dir.empty()) throw Error("--plot-width, --plot-seed: they choose what --plot DIR draws");
    if ((o.plot_width || o.plot_seed) && !plan.kind->plot_takes_choice)
        throw Error("--plot-width, --plot-seed: experiment '" + plan.kind->name + "' draws no per-width or per-seed figure");
    // Checked before the work, not after it (runner::PlotChoice: a width is a runs' model.width).
    if (o.plot_seed && std::find(plan.seeds.begin(), plan.seeds.end(), *o.plot_seed) == plan.seeds.end())
        throw Error(fmt::format("--plot-seed {}: the sweep runs seeds {}", *o.plot_seed, fmt::join(plan.seeds, ", ")));
    if (o.plot_width && std::none_of(plan.runs.begin(), plan.runs.end(),
                                     [&](const runner::Run& r) { return r.integer("model.width") == *o.plot_width; }))
        throw Error(fmt::format("--plot-width {}: no run of the sweep has that model.width", *o.plot_width));
    if (!o.save_weights.empty() && !plan.kind->saves_weights)
        throw Error("--save-weights: experiment '" + plan.kind->name + "' trains nothing, so it has no weights to save");
    if (!o.shard.empty()) return run_shard(plan, o);
    if (!o.plot_dir.empty()) experiments::plot::require_gnuplot();
    // A bad --out fails before the work, not after it (runner::OutputSet
    // judges the folder and holds it until the new set is in).
    std::optional<runner::OutputSet> out;
    const std::string out_dir = output_folder(o);
    if (!out_dir.empty()) out.emplace(out_dir, o.config);
    // Finished runs go to the cache as they finish, straight into OUT/runs
    // (not the staged set), so that a kill before the tables are written
    // keeps them; the staged set takes them over at commit.
    const std::string cache = !o.cache_dir.empty() ? runner::resolve_output_path(o.cache_dir, "--cache") : out ? out->cache() : "";
    // The --out folder is replaced as a whole at the end: a cache inside
    // it, other than its own runs/, would go with the old set.
    if (!o.cache_dir.empty() && out && out->holds(cache) && !runner::same_folder(cache, out->cache()))
        throw Error("--cache " + o.cache_dir + ": inside --out " + out_dir + ", which is replaced as a whole; give a folder outside it");
    // Weights and figures inside --out join the set; elsewhere they go where named.
    const auto resolved = [](const std::string& dir, const char* what) { return dir.empty() ? dir : runner::resolve_output_path(dir, what); };
    const std::string weights_named = resolved(o.save_weights, "--save-weights"), plots_named = resolved(o.plot_dir, "--plot");
    const auto placed = [&](const std::string& dir) { return out && !dir.empty() ? out->place(dir) : dir; };
    const std::string weights = placed(weights_named), plots = placed(plots_named);
    const bool plots_in_set = plots != plots_named;
    for (const auto* dir : {&cache, &weights, &plots})
        if (!dir->empty()) make_output_folder(*dir);
    runner::SweepResult result = execute_with_progress(plan,
                                                       {.threads = o.threads,
                                                        .artifacts = weights,
                                                        .cache = cache,
                                                        .fresh = o.fresh,
                                                        .cache_also = shard_caches,
                                                        .cached_only = !o.merge.empty()},
                                                       o.quiet);
    if (!o.merge.empty()) result.manifest["merged_shards"] = o.merge;
    if (result.manifest.value("runs_not_cached", 0) > 0)
        std::cerr << fmt::format("{}: warning: {} finished runs could not be kept in {}; a rerun computes them again\n", o.config,
                                 result.manifest.value("runs_not_cached", 0), cache);
    if (!o.quiet && result.manifest.value("runs_reused", 0) > 0)
        std::cerr << fmt::format("{}: {} of {} runs reused from {} (--fresh computes them all)\n", o.config,
                                 result.manifest.value("runs_reused", 0), plan.runs.size(), cache);
    // Files and figures first: a display option that names no table or
    // column (known only now) must not cost the sweep's results. Figures
    // inside --out are part of its set, so they are drawn before it goes in.
    if (plots_in_set) plan.kind->plot(plan, result.tables, plots, {o.plot_width, o.plot_seed});
    if (out) {
        write_outputs(*out, plan.kind->name, result.tables, result.manifest);
        for (const auto& kept : out->kept())
            std::cerr << fmt::format("{}: warning: files ffn-lab did not write appeared in {} while it ran; they are kept in {}\n",
                                     o.config, out->path(), kept);
        if (!o.quiet && o.out_dir.empty()) std::cerr << o.config << ": tables written to " << out_dir << "\n";
    }
    if (!plots.empty() && !plots_in_set) plan.kind->plot(plan, result.tables, plots, {o.plot_width, o.plot_seed});
    std::vector<report::Table> shown;
    for (const auto& name : o.tables) {
        std::string known;
        bool found = false;
        for (const auto& t : result.tables) {
            known += (known.empty() ? "" : ", ") + t.name();
            if (t.name() == name) {
                shown.push_back(t);
                found = true;
            }
        }
        if (!found) throw Error("--table " + name + ": experiment '" + plan.kind->name + "' has tables " + known);
    }
    if (o.tables.empty()) shown = result.tables;
    if (!o.columns.empty()) {
        for (const auto& name : o.columns)
            if (std::none_of(shown.begin(), shown.end(), [&](const report::Table& t) { return t.find_column(name).has_value(); }))
                throw Error("--columns " + name + ": no table printed has that column (ffn-lab sweep ... --format json "
                            "lists every table's columns)");
        if (!terminal) {
            // A table with none of the columns is left out, not printed as empty rows.
            std::erase_if(shown, [&](const report::Table& t) {
                return std::none_of(o.columns.begin(), o.columns.end(), [&](const std::string& c) { return t.find_column(c).has_value(); });
            });
            for (auto& t : shown) t = report::only_columns(t, o.columns);
        }
    }
    // CSV is one table per stream for pandas and friends: several tables
    // would need separators no CSV reader knows.
    if (format == "csv" && shown.size() > 1) {
        std::string names;
        for (const auto& t : shown) names += (names.empty() ? "" : ", ") + t.name();
        throw Error(fmt::format("--format csv: experiment '{}' has {} tables ({}); name one with --table (--out writes them all)",
                                plan.kind->name, shown.size(), names));
    }
    if (terminal) {
        const report::TerminalView view{terminal_width(), o.wide, o.columns};
        for (std::size_t i = 0; i < shown.size(); ++i) {
            const auto& t = shown[i];
            std::cout << (i ? "\n" : "") << "## " << t.name() << "\n\n";
            // A table of a row per run is for files and for asking by name.
            if (t.long_form() && o.tables.empty())
                std::cout << fmt::format("{} rows, one per run or logged step: --table {} prints them, --out writes them\n",
                                         t.row_count(), t.name());
            else
                std::cout << report::to_terminal(t, view);
        }
    } else if (format == "json") {
        std::cout << report::results_document(plan.kind->name, shown, result.manifest).dump(2) << "\n";
    } else {
        for (std::size_t i = 0; i < shown.size(); ++i) {
            const auto& t = shown[i];
            if (format == "md") std::cout << (i ? "\n" : "") << "## " << t.name() << "\n\n" << to_markdown(t);
            else std::cout << to_csv(t);
        }
    }
    std::cout.flush();
    const auto& e = result.expect;
    const auto verdicts = report::count_verdicts(result.tables);
    if (!o.quiet && verdicts.pass + verdicts.miss + verdicts.not_applicable > 0)
        std::cerr << fmt::format("{}: verdicts {} pass, {} miss, {} n/a\n", o.config, verdicts.pass, verdicts.miss,
                                 verdicts.not_applicable);
    if (!o.quiet && e.passed + e.missed > 0)
        std::cerr << fmt::format("{}: {} of {} document values matched{}\n", o.config, e.passed, e.passed + e.missed,
                                 e.missed ? fmt::format(", {} missed", e.missed) : "");
    if (!o.quiet && !plan.protocol_deviations.empty()) {
        std::string keys;
        for (const auto& k : plan.protocol_deviations) keys += (keys.empty() ? "" : ", ") + k;
        if (verdicts.pass + verdicts.miss > 0)
            std::cerr << fmt::format("{}: rows off the document's protocol ({} differ) are not judged\n", o.config, keys);
        else
            std::cerr << fmt::format("{}: not the document's protocol ({} differ{}): no document value is judged\n", o.config,
                                     keys, plan.follows_protocol({"seeds"}) ? "; its values are shown beside ours" : "");
    }
    if (!o.quiet)
        for (const auto& origin : e.unmatched) std::cerr << origin << ": no row to compare (narrowed by --set?)\n";
    // --check judges every verdict column: a miss anywhere fails it, n/a never does.
    return o.check && verdicts.miss > 0 ? 1 : 0;
}

}  // namespace ffn::app
