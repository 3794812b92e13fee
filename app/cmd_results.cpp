#include "cmd_results.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "core/error.h"
#include "experiments/registry.h"
#include "report/text.h"
#include "runner/history.h"
#include "runner/sweep.h"

namespace ffn::app {

CLI::App* setup_results(CLI::App& app, ResultsOptions& o) {
    auto* cmd = app.add_subcommand("results", "List the result folders sweeps wrote with --out: config, overrides, commit, "
                                              "time, runs, verdicts, headline (feed two of them to `diff`)");
    cmd->add_option("folders", o.roots, "Result folders, or folders to search for them (default: results)");
    add_display_options(cmd, o.display, Printed::folders, "folder,pass,config/lr (a config key as config/KEY)");
    cmd->add_option("--durations", o.durations,
                    "Then list the N slowest folders with their wall times, on stderr (pytest's --durations)")
        ->check(CLI::Range(1, 100000));
    return cmd;
}

int run_results(const ResultsOptions& o) {
    check_display(o.display);
    const std::vector<std::string> roots = o.roots.empty() ? std::vector<std::string>{runner::kResultsFolder} : o.roots;
    if (o.roots.empty() && !std::filesystem::is_directory(runner::kResultsFolder))
        throw Error("results: no such folder here (sweep --out with no folder writes results/<config>/<time>/; "
                    "`ffn-lab results DIR` searches DIR)");
    std::vector<std::string> unreadable;
    const report::Table folders = runner::result_folders(roots, &experiments::all_kinds(), o.display.columns, &unreadable);
    // A set whose manifest was damaged is not silently missing from the list.
    for (const auto& folder : unreadable)
        std::cerr << "results: " << report::printable(folder)
                  << ": its manifest.json is not one ffn-lab wrote (unreadable or damaged); the folder is left out\n";
    if (folders.row_count() == 0) {
        std::string where;
        for (const auto& r : roots) where += (where.empty() ? "" : ", ") + r;
        std::cerr << "results: no result folders under " << where << " (a sweep writes one with --out)\n";
        return 0;
    }
    print_tables({folders}, "results", nullptr, o.display);
    if (o.durations > 0) {
        // On stderr: stdout stays the table, whatever its format.
        std::vector<std::pair<double, std::string>> times;
        for (std::size_t row = 0; row < folders.row_count(); ++row)
            if (const auto wall = report::as_number(folders.at(row, "wall_seconds")))
                if (const auto* folder = std::get_if<std::string>(&folders.at(row, "folder"))) times.emplace_back(*wall, *folder);
        print_slowest(std::cerr, times, o.durations);
    }
    return 0;
}

}  // namespace ffn::app
