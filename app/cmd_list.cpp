#include "cmd_list.h"

#include <filesystem>
#include <fmt/format.h>
#include <iostream>

#include <unistd.h>

#include "common.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "io/bundle.h"
#include "runner/check.h"
#include "report/table_io.h"
#include "report/terminal.h"
#include "runner/config.h"

namespace ffn::app {

CLI::App* setup_list(CLI::App& app, ListOptions& o) {
    auto* cmd = app.add_subcommand("list", "List the experiment kinds and the bundled configs");
    cmd->add_option("--root", o.root, "ffn-lab checkout holding configs/ (default: found automatically)");
    cmd->add_option("--keys", o.keys, "print the config keys of this experiment kind (markdown)")->option_text("KIND");
    return cmd;
}

namespace {

constexpr const char* kBlocks = "Every config also takes `experiment`, `description`, `sweep`, `zip`, `expect`, `check` and `protocol`.";

std::string without_backticks(std::string s) {
    std::erase(s, '`');
    return s;
}

// On a terminal, a key a paragraph: its name, what it accepts and its
// default on one line, its help below, wrapped to the terminal. Into a
// file or a pipe, the markdown table the kinds' READMEs hold.
void print_key_table(const report::Table& keys) {
    if (!::isatty(STDOUT_FILENO)) {
        std::cout << report::to_markdown(keys) << "\n" << kBlocks << "\n";
        return;
    }
    const std::size_t width = terminal_width();
    for (std::size_t r = 0; r < keys.row_count(); ++r) {
        const auto text = [&](const char* column) { return without_backticks(report::format_cell(keys.at(r, column), 6)); };
        std::cout << report::wrapped("  " + text("key") + ":", text("accepts") + "; default " + text("default"), width, 6)
                  << report::wrapped("      ", text("help"), width, 6);
    }
    std::cout << "\n" << report::wrapped("", without_backticks(kBlocks), width, 0);
}

int print_keys(const std::string& name) {
    std::vector<std::string> names;
    for (const auto& k : experiments::all_kinds()) {
        if (k.name == name) {
            print_key_table(runner::key_table(k));
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
    // On a terminal, each description wraps under itself; into a pipe, a
    // line each, whole, for grep.
    const std::size_t width = ::isatty(STDOUT_FILENO) ? terminal_width() : std::string::npos;
    std::cout << "Experiment kinds:\n";
    for (const auto& k : experiments::all_kinds()) std::cout << report::wrapped(fmt::format("  {:<20} ", k.name), k.description, width, 23);
    // Where each config comes from: the checkout's configs/ (which wins
    // wherever the user stands in one), else the copies built into the binary.
    const std::string root = find_root(o.root);
    const std::string folder = runner::configs_folder(root);
    if (root.empty()) std::cout << "\nBundled configs (built into this binary; inside an ffn-lab checkout, its configs/ are listed):\n";
    else std::cout << "\nBundled configs (from " << folder << "/):\n";
    if (!root.empty()) (void)runner::bundled_configs(root);  // a --root without configs/ is refused by name
    for (const auto& name : runner::bundled_config_names(folder)) {
        std::vector<std::string> tried;
        const std::string path = runner::find_bundled_config(folder, name, tried).value_or(name);
        std::string what;
        try {
            const auto j = runner::load_config(path, folder);
            what = fmt::format("[{}] {}", j.value("experiment", "?"), j.value("description", ""));
        } catch (const Error& e) {
            what = std::string("(unreadable: ") + e.what() + ")";
        }
        std::cout << report::wrapped(fmt::format("  {:<28} ", root.empty() ? name : io::bundle::shown(path)), what, width, 31);
    }
    return 0;
}

}  // namespace ffn::app
