#pragma once
// The contract between the runner and an experiment kind. A kind declares its
// schema and computes the tables of one run; the runner validates, expands the
// grid, schedules runs on threads and joins their tables. A kind that needs
// statistics over seeds supplies `aggregate`.
#include <functional>
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"
#include "runner/schema.h"

namespace ffn::runner {

struct ExperimentKind {
    std::string name = {};
    std::string description = {};  // one line, for `ffn-lab list`
    Schema schema = {};
    // Optional: refuses (ffn::Error) a plan the schema alone cannot judge,
    // relations between keys or across runs, before any run starts.
    std::function<void(const Plan&)> validate = {};
    // Computes one run. Must depend only on the run (values, seed): it is
    // called concurrently from several threads. run.artifacts, when set, is
    // a folder for files the run may write (sweep --save-weights).
    std::function<std::vector<report::Table>(const Run&)> run = {};
    // Joins the runs' tables (per_run[i] belongs to plan.runs[i]). Empty: the
    // default, which concatenates same-named tables with the swept values as
    // leading columns.
    std::function<std::vector<report::Table>(const Plan&, std::vector<std::vector<report::Table>>&)> aggregate = {};
    // True when runs write their models under run.artifacts (sweep --save-weights).
    bool saves_weights = false;
    // Optional figures for `sweep --plot DIR`, from the plan and its final tables.
    std::function<void(const Plan&, const std::vector<report::Table>&, const std::string&)> plot = {};
};

// Runs that differ only in their seed, grouped, in grid order: the unit over
// which seed statistics are taken.
std::vector<std::vector<std::size_t>> seed_groups(const Plan& plan);

// The swept values of a group (its first run's, without the seed), as
// leading table columns.
void add_swept_columns(const Plan& plan, report::Table& table);
std::vector<report::Cell> swept_cells(const Plan& plan, std::size_t run);

// The default join described above.
std::vector<report::Table> concatenate_runs(const Plan& plan, std::vector<std::vector<report::Table>>& per_run);

}  // namespace ffn::runner
