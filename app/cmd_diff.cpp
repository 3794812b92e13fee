#include "cmd_diff.h"

#include <algorithm>
#include <cmath>
#include <iostream>

#include "core/error.h"

#include "report/diff.h"
#include "report/table_io.h"

namespace ffn::app {

CLI::App* setup_diff(CLI::App& app, DiffOptions& o) {
    auto* cmd = app.add_subcommand(
        "diff", "Compare two result tables (JSON or CSV) cell by cell; exit 0 equal, 1 different, 2 error");
    cmd->add_option("A", o.a, "First results file")->required();
    cmd->add_option("B", o.b, "Second results file")->required();
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
    return cmd;
}

int run_diff(const DiffOptions& o) {
    auto a = report::read_tables(o.a);
    auto b = report::read_tables(o.b);
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
    const auto differences = report::diff_tables(a, b, {o.rtol, o.atol});
    for (const auto& d : differences) std::cout << report::describe(d) << "\n";
    return differences.empty() ? 0 : 1;
}

}  // namespace ffn::app
