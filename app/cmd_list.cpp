#include "cmd_list.h"

#include <fmt/format.h>
#include <iostream>

#include "common.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "runner/check.h"
#include "report/table_io.h"
#include "runner/config.h"

namespace ffn::app {

CLI::App* setup_list(CLI::App& app, ListOptions& o) {
    auto* cmd = app.add_subcommand("list", "List the experiment kinds and the bundled configs");
    cmd->add_option("--root", o.root, "ffn-lab checkout holding configs/ (default: found automatically)");
    cmd->add_option("--keys", o.keys, "print the config keys of this experiment kind (markdown)")->option_text("KIND");
    return cmd;
}

namespace {

int print_keys(const std::string& name) {
    std::vector<std::string> names;
    for (const auto& k : experiments::all_kinds()) {
        if (k.name == name) {
            std::cout << report::to_markdown(runner::key_table(k))
                      << "\nEvery config also takes `experiment`, `description`, `sweep`, `zip`, `expect`, `check` and `protocol`.\n";
            return 0;
        }
        names.push_back(k.name);
    }
    std::string msg = "--keys: no experiment kind '" + name + "'";
    if (auto guess = runner::did_you_mean(name, names)) msg += " (did you mean '" + *guess + "'?)";
    throw Error(msg + "; `ffn-lab list` lists them");
}

}  // namespace

int run_list(const ListOptions& o) {
    if (o.keys) return print_keys(*o.keys);
    std::cout << "Experiment kinds:\n";
    for (const auto& k : experiments::all_kinds()) std::cout << fmt::format("  {:<20} {}\n", k.name, k.description);
    const std::string root = find_root(o.root);
    if (root.empty()) {
        std::cout << "\n(not inside an ffn-lab checkout: no bundled configs to list; --root names one)\n";
        return 0;
    }
    std::cout << "\nBundled configs:\n";
    for (const auto& path : runner::bundled_configs(root)) {
        std::string what;
        try {
            const auto j = runner::load_config(path);
            what = fmt::format("[{}] {}", j.value("experiment", "?"), j.value("description", ""));
        } catch (const Error& e) {
            what = std::string("(unreadable: ") + e.what() + ")";
        }
        std::cout << fmt::format("  {:<28} {}\n", path, what);
    }
    return 0;
}

}  // namespace ffn::app
