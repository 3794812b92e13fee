#include "cmd_diff.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include <unistd.h>

#include "common.h"
#include "core/error.h"
#include "report/diff.h"
#include "report/table_io.h"
#include "report/terminal.h"
#include "report/text.h"
#include "runner/history.h"
#include "runner/output_set.h"

namespace ffn::app {

CLI::App* setup_diff(CLI::App& app, DiffOptions& o) {
    auto* cmd = app.add_subcommand(
        "diff", "Compare two results (table files, JSON or CSV, or two --out folders as wholes); exit 0 equal, 1 different, 2 error");
    cmd->add_option("A", o.a, "First results: a table file or an --out folder")->required();
    cmd->add_option("B", o.b, "Second results, the reference for --rtol")->required();
    // NaN passes NonNegativeNumber (no comparison with it is false), and
    // a NaN or infinite tolerance would let every difference through.
    const auto finite_non_negative = [](const std::string& text) {
        double v = 0;
        try {
            v = std::stod(text);
        } catch (const std::exception&) {
            return std::string("expected a number >= 0, got '") + text + "'";
        }
        return std::isfinite(v) && v >= 0 ? std::string() : std::string("expected a finite number >= 0, got ") + text;
    };
    cmd->add_option("--rtol", o.rtol, "Relative tolerance, times |B|: B is the reference")->check(finite_non_negative);
    cmd->add_option("--atol", o.atol, "Absolute tolerance")->check(finite_non_negative);
    cmd->add_option("--table", o.tables, "Compare only this table (repeatable)");
    cmd->add_option("--columns", o.columns, "Compare only these columns (comma-separated; rows are still matched by their keys)")
        ->delimiter(',');
    cmd->add_flag("--lines", o.lines, "One line per difference, as `check` prints them (for grep and scripts)");
    return cmd;
}

namespace {

struct Side {
    std::vector<report::Table> tables;
    std::optional<runner::Json> manifest;  // when the side is an --out folder
};

Side read_side(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) {
        auto folder = runner::read_result_folder(path);
        return {std::move(folder.tables), std::move(folder.manifest)};
    }
    if (std::filesystem::path(path).extension() == ".md")
        throw Error(path + ": markdown is for reading, not read back; diff the .json or .csv beside it");
    return {report::read_tables(path), std::nullopt};
}

}  // namespace

int run_diff(const DiffOptions& o) {
    const Side side_a = read_side(o.a), side_b = read_side(o.b);
    auto a = side_a.tables;
    auto b = side_b.tables;
    if (!o.tables.empty()) {
        const auto only_named = [&](std::vector<report::Table>& tables) {
            std::erase_if(tables, [&](const report::Table& t) {
                return std::find(o.tables.begin(), o.tables.end(), t.name()) == o.tables.end();
            });
        };
        only_named(a);
        only_named(b);
        for (const auto& name : o.tables) {
            const auto has = [&](const std::vector<report::Table>& tables) {
                return std::any_of(tables.begin(), tables.end(), [&](const report::Table& t) { return t.name() == name; });
            };
            if (!has(a) && !has(b)) throw Error("--table " + name + ": neither " + o.a + " nor " + o.b + " has that table");
        }
    }
    auto differences = report::diff_tables(a, b, {o.rtol, o.atol});
    if (!o.columns.empty()) {
        const auto named = [&](const std::string& column) {
            return std::find(o.columns.begin(), o.columns.end(), column) != o.columns.end();
        };
        for (const auto& column : o.columns) {
            const auto has = [&](const std::vector<report::Table>& tables) {
                return std::any_of(tables.begin(), tables.end(), [&](const report::Table& t) { return t.find_column(column).has_value(); });
            };
            if (!has(a) && !has(b)) throw Error("--columns " + column + ": no table of " + o.a + " or " + o.b + " has that column");
        }
        std::erase_if(differences, [&](const report::Difference& d) { return d.is_cell() && !named(d.column); });
    }
    // Compared: the tables both sides hold (one on one side only is a
    // difference of shape, not a comparison).
    const auto compared = static_cast<std::size_t>(std::count_if(a.begin(), a.end(), [&](const report::Table& t) {
        return std::any_of(b.begin(), b.end(), [&](const report::Table& u) { return u.name() == t.name(); });
    }));
    if (o.lines) {
        for (const auto& d : differences) std::cout << report::describe(d) << "\n";
        return differences.empty() ? 0 : 1;
    }
    std::cout << report::difference_summary(differences, compared) << "\n";
    for (const auto& d : differences)
        if (!d.is_cell()) std::cout << "  " << d.where << "\n";
    const bool terminal = ::isatty(STDOUT_FILENO) != 0;
    // wide: the manifests' A and B are the point of that table, never cut.
    const auto print = [&](const report::Table& t, bool wide) {
        std::cout << "\n## " << t.name() << "\n\n" << (terminal ? report::to_terminal(t, {terminal_width(), wide, {}}) : report::to_markdown(t));
    };
    // Two folders: what ran, and how, beside what came out. It does not
    // change the exit status, which the tables decide.
    if (side_a.manifest && side_b.manifest) {
        const auto manifests = runner::manifest_differences(*side_a.manifest, *side_b.manifest);
        if (!manifests.rows().empty()) {
            std::cout << fmt::format("the manifests differ in {} (what ran and how):\n", report::counted(manifests.rows().size(), "key"));
            print(manifests, true);
        }
    }
    for (const auto& t : report::difference_tables(differences)) print(t, false);
    return differences.empty() ? 0 : 1;
}

}  // namespace ffn::app
