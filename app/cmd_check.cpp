#include "cmd_check.h"

#include <fmt/format.h>
#include <filesystem>
#include <iostream>

#include "common.h"
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
    return cmd;
}

int run_check(const CheckOptions& o) {
    const std::string root = find_root(o.root);
    if (root.empty())
        throw Error("check: not inside an ffn-lab checkout (no configs/ and experiments/ here or above); --root names one");
    const auto configs = o.configs.empty() ? runner::bundled_configs(root) : o.configs;
    // Nothing checked is no pass: pytest, too, fails a run that collected nothing.
    if (configs.empty())
        throw Error("check: no configs in " + (std::filesystem::path(root) / "configs").string() +
                    " (check reads the .json files directly in it, not in its subfolders)");
    for (const auto& config : configs) runner::require_in_checkout(config, root);
    int ok = 0, differ = 0, errors = 0, updated = 0;
    for (const auto& config : configs) {
        const auto outcome = runner::check_config(config, root, o.update, experiments::all_kinds(), o.threads, bundled_configs());
        const char* word = "error";
        switch (outcome.status) {
            case runner::CheckStatus::ok: word = "ok"; ++ok; break;
            case runner::CheckStatus::differs: word = "differs"; ++differ; break;
            case runner::CheckStatus::updated: word = "updated"; ++updated; break;
            case runner::CheckStatus::error: ++errors; break;
        }
        std::cout << fmt::format("{:<8} {}\n", word, config);
        for (const auto& line : outcome.details) std::cout << "         " << line << "\n";
        std::cout.flush();  // a line per config as it ends, in a pipe or a CI log too
    }
    std::cout << fmt::format("check: {} ok, {} {}, {}{}\n", ok, differ, differ == 1 ? "differs" : "differ", report::counted(errors, "error"),
                             o.update ? fmt::format(", {} updated", updated) : "");
    if (errors) return 2;
    return differ ? 1 : 0;
}

}  // namespace ffn::app
