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
    std::string name;
    std::string description;  // one line, for `ffn-lab list`
    Schema schema;
    // Computes one run. Must depend only on the run (values, seed): it is
    // called concurrently from several threads.
    std::function<std::vector<report::Table>(const Run&)> run;
    // Joins the runs' tables (per_run[i] belongs to plan.runs[i]). Empty: the
    // default, which concatenates same-named tables with the swept values as
    // leading columns.
    std::function<std::vector<report::Table>(const Plan&, std::vector<std::vector<report::Table>>&)> aggregate;
};

// The default join described above.
std::vector<report::Table> concatenate_runs(const Plan& plan, std::vector<std::vector<report::Table>>& per_run);

}  // namespace ffn::runner
