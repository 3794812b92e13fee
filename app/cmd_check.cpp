#include "cmd_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>

#include "common.h"
#include "results.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "report/text.h"
#include "runner/check.h"

namespace ffn::app {

CLI::App* setup_check(CLI::App& app, CheckOptions& o) {
    auto* cmd = app.add_subcommand(
        "check", "Regenerate configs (default: all under configs/) and diff them against their expected tables");
    cmd->add_option("configs", o.configs, "Config files to check (default: every configs/*.json of the root)");
    cmd->add_option("--root", o.root,
                    "An ffn-lab checkout, or your own study folder holding configs/ (its expected tables go to expected/; "
                    "default: the checkout found from here)");
    cmd->add_flag("--update", o.update, "Rewrite the expected tables from a fresh run instead of comparing");
    cmd->add_option("-t,--threads", o.threads, "Worker threads (0: all cores)")->check(CLI::Range(0, 1024));
    cmd->add_flag("--quick", o.quick,
                  "Leave out the configs whose check is long (\"check\": {\"long\": true}: trainers that take more than a few seconds)");
    cmd->add_option("--durations", o.durations, "Then list the N slowest configs, with their times (pytest's --durations)")
        ->check(CLI::Range(1, 100000));
    return cmd;
}

int run_check(const CheckOptions& o) {
    const std::string root = find_root(o.root);
    if (root.empty())
        throw Error("check: not inside an ffn-lab checkout (no configs/ and experiments/ here or above); --root names one");
    const auto configs = o.configs.empty() ? runner::bundled_configs(root) : o.configs;
    // Nothing checked is no pass: pytest, too, fails a run that collected nothing.
    if (configs.empty())
        throw Error("check: no configs in " + runner::configs_folder(root) +
                    " (check reads the .json files directly in it, not in its subfolders)");
    for (const auto& config : configs) runner::require_in_checkout(config, root);
    int ok = 0, differ = 0, errors = 0, updated = 0, skipped = 0;
    std::vector<std::pair<double, std::string>> times;  // seconds, config
    const auto start = std::chrono::steady_clock::now();
    for (const auto& config : configs) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto outcome =
            runner::check_config(config, root, o.update, experiments::all_kinds(), o.threads, bundled_configs(), o.quick);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        const char* word = "error";
        switch (outcome.status) {
            case runner::CheckStatus::ok: word = "ok"; ++ok; break;
            case runner::CheckStatus::differs: word = "differs"; ++differ; break;
            case runner::CheckStatus::updated: word = "updated"; ++updated; break;
            case runner::CheckStatus::skipped: word = "skipped"; ++skipped; break;
            case runner::CheckStatus::error: ++errors; break;
        }
        if (outcome.status == runner::CheckStatus::skipped) {
            std::cout << fmt::format("{:<8} {} (long; --quick leaves it out)\n", word, config);
        } else {
            std::cout << fmt::format("{:<8} {}  {}\n", word, config, report::seconds_text(seconds));
            times.emplace_back(seconds, config);
        }
        for (const auto& line : outcome.details) std::cout << "         " << line << "\n";
        std::cout.flush();  // a line per config as it ends, in a pipe or a CI log too
    }
    const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << fmt::format("check: {} ok, {} {}, {}{}{} in {}\n", ok, differ, differ == 1 ? "differs" : "differ",
                             report::counted(errors, "error"), o.update ? fmt::format(", {} updated", updated) : "",
                             skipped ? fmt::format(", {} long skipped", skipped) : "", report::seconds_text(total));
    if (o.durations > 0) print_slowest(std::cout, times, o.durations);
    // Nothing checked is no pass, --quick's skips included.
    if (ok + differ + errors + updated == 0)
        throw Error("check --quick: every config given is marked long (\"check\": {\"long\": true}); nothing was checked");
    if (errors) return 2;
    return differ ? 1 : 0;
}

}  // namespace ffn::app
