#pragma once
// What a kind's `aggregate` receives: the plan, every run's tables, and the
// runner's ways of laying them out, so that the tables of every kind name
// their runs and groups alike (the swept values leading, a run by its seed
// and id). The runner calls the kind with it; the kind calls nothing back.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "report/table.h"
#include "runner/config.h"

namespace ffn::runner {

struct SeedStatistics;
class RunRows;

// A swept value as a cell of its column: a real where the key is swept
// over reals, even for a value written as an integer.
report::Cell swept_cell(const Plan& plan, const std::string& key, const Json& value);

class Aggregation {
public:
    Aggregation(const Plan& plan, std::vector<std::vector<report::Table>>& per_run, std::shared_ptr<const RunRows> run_rows = nullptr)
        : plan(plan), per_run(per_run), run_rows(std::move(run_rows)) {}

    const Plan& plan;
    // per_run[i] belongs to plan.runs[i]; for a kind of one_row_runs, it
    // holds the tables after the first, whose rows are in run_rows.
    std::vector<std::vector<report::Table>>& per_run;
    const std::shared_ptr<const RunRows> run_rows;

    // The cell `column` of run `run`'s first table's first row (null when
    // the run gave no row), from per_run or run_rows alike.
    report::Cell run_cell(std::size_t run, const std::string& column) const;
    // Run `run`'s table named `name` among those per_run holds, or null.
    const report::Table* run_table(std::size_t run, const std::string& name) const;

    // The runs of each point of the grid (its seeds), in grid order.
    std::vector<std::vector<std::size_t>> seed_groups() const;

    // The swept values of a group (its first run's, without the seed), as
    // leading table columns.
    void add_swept_columns(report::Table& table) const;
    std::vector<report::Cell> swept_cells(std::size_t run) const;
    // What names run `run`'s group beside others, as one string: its swept
    // values but the seed and the keys `without` (or, with `resolved`, every
    // resolved value but the seed and those keys). Runs with equal keys differ
    // only in what was left out: a kind links a width to the same settings one
    // width narrower by it, or names a stream by what a group computes.
    std::string settings_key(std::size_t run, const std::vector<std::string>& without, bool resolved = false) const;
    // Those columns first, then `rest`: a table's terminal summary
    // (report::Table::set_summary), labels as there.
    void set_summary_after_swept(report::Table& table, const std::vector<std::pair<std::string, std::string>>& rest) const;
    // A table without a summary of its own gets the swept columns and the
    // kind's headline columns for it (ExperimentKind::headlines).
    void set_headline_summary(report::Table& table) const;

    // Statistics over each seed group's runs, as a kind declares them.
    report::Table summarize_seeds(const SeedStatistics& spec) const;
    // Every run's row, one per run in grid order: the swept values, the seed,
    // the run id (which joins the row with the manifest and saved files), then
    // the first row of the run's first table. A kind's "runs" table.
    report::Table per_run_rows() const;
    // The same table, made by moving each run's first row out of per_run
    // (a sweep of a million runs holds its rows once, not twice): for a
    // kind's last read of those rows. The runs' first tables are left with
    // no rows. For a kind of one_row_runs, a table whose rows are made from
    // run_rows as they are read (written to files a row at a time).
    report::Table take_per_run_rows();
    // The default join: same-named tables concatenated, the swept values as
    // leading columns (moves the runs' tables).
    std::vector<report::Table> concatenate_runs();
    // concatenate_runs' table `name` alone, in long form (a per-run table a
    // terminal should not print whole); throws if no run made one.
    report::Table concatenated(const std::string& name);
};

}  // namespace ffn::runner
