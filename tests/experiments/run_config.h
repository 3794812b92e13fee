#pragma once
// Runs a bundled config (with --set style overrides) the way `ffn-lab sweep`
// does, for tests that assert an experiment's numbers directly.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "experiments/registry.h"
#include "runner/execute.h"
#include "support.h"

namespace ffn::test {

inline runner::SweepResult run_config(const std::string& name, const std::vector<std::string>& sets = {}) {
    std::vector<runner::Override> overrides;
    for (const auto& s : sets) overrides.push_back(runner::parse_override(s));
    const auto path = source_path("configs/" + name);
    const auto plan = runner::make_plan(runner::load_config(path), path, overrides, experiments::all_kinds());
    return runner::execute(plan, {2, {}, {}});
}

// A numeric cell of a table (the test fails on an empty one).
inline double num(const report::Table& t, std::size_t row, const std::string& column) {
    const auto x = report::as_number(t.at(row, column));
    REQUIRE_MESSAGE(x, "no number in column " << column << ", row " << row);
    return *x;
}

inline const report::Table& table(const runner::SweepResult& r, const std::string& name) {
    for (const auto& t : r.tables)
        if (t.name() == name) return t;
    FAIL("no table " << name);
    throw;
}

}  // namespace ffn::test
