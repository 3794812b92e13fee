#pragma once
// The contract between the runner and an experiment kind. A kind declares its
// schema and computes the tables of one run; the runner validates, expands the
// grid, schedules runs on threads and joins their tables. A kind that needs
// statistics over seeds declares them (`seed_statistics`), or supplies its
// own `aggregate` when it judges more than columns.
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <set>
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/aggregation.h"
#include "runner/config.h"
#include "runner/live.h"
#include "runner/schema.h"

namespace ffn::runner {

enum class Statistic { mean, sd, median, min, max };

// Statistics over the seeds of each point of the grid, declared by a kind:
// one row per group of runs that differ only in their seed, with the swept
// values, the config `keys` the sweep does not show, the number of seeds,
// then for each summarised column "<as>_<statistic>". Values are read from
// the first row of each run's first table; a run without a number there is
// left out of that column's statistics.
struct SeedStatistics {
    struct Summary {
        std::string column;  // in the run's table
        std::string as;      // prefix of the aggregate columns
        std::vector<Statistic> statistics;
    };
    std::string table;
    std::vector<std::string> keys = {};
    std::vector<Summary> columns = {};
    int precision = 4;
};

// What `sweep --plot-width W --plot-seed S` ask a figure to show: the
// width to break down into its units, the seed to draw (else the kind's
// own pick). runner::sweep checks both against the plan before it runs:
// the seed against the plan's seeds, the rest by the kind's
// validate_plot_choice.
struct PlotChoice {
    std::optional<std::int64_t> width;
    std::optional<std::uint64_t> seed;
};

// For `bench sweep`: the 1-m-1 nets whose PyTorch step (the "sweep" mode of
// lib/bench/torch_reference.py) is the reference for a plan's runs, and how
// many steps the plan trains of each; or why there is no reference.
struct TorchNets {
    std::int64_t samples = 0;
    std::map<std::pair<std::string, std::int64_t>, double> steps;  // (activation, width) -> steps
    std::string unavailable;                                      // non-empty: no reference, and why
};

struct ExperimentKind {
    std::string name = {};
    std::string description = {};  // one line, for `ffn-lab list`
    Schema schema = {};
    // The columns a reader comes for, by table: a terminal shows a table's
    // swept values, these and its verdict, and names the rest (the
    // document's values among them). A table whose aggregate set its own
    // summary (report::Table::set_summary) keeps it.
    std::map<std::string, std::vector<std::string>> headlines = {};
    // Optional: the keys an input file fixes (a weights file's sizes, the
    // activation it was trained with): called on each grid point with the
    // keys the config sets (its file, its bases, --set, its axes). Fills
    // those the config leaves unset from the file; throws ffn::Error naming
    // both values where the config sets one the file contradicts.
    std::function<void(GridPoint&, const std::set<std::string>& given)> keys_from_files = {};
    // Optional: refuses (ffn::Error) a plan the schema alone cannot judge,
    // relations between keys or across runs, before any run starts.
    std::function<void(const Plan&)> validate = {};
    // Computes one run. Must depend only on the run (values, seed): it is
    // called concurrently from several threads. run.artifacts, when set, is
    // a folder for files the run may write (sweep --save-weights).
    std::function<std::vector<report::Table>(const Run&)> run = {};
    // Optional: computes several runs that differ only in their seed at
    // once (a kind that trains many small models as one computation). Must
    // return, for each run, exactly what `run` returns for it alone. The
    // runner hands it at most `batch_runs` runs of one seed group at a time.
    std::function<std::vector<std::vector<report::Table>>(std::span<const Run>)> run_batch = {};
    std::size_t batch_runs = 8;
    // Joins the runs' tables (runner/aggregation.h). Empty: the seed
    // statistics below when declared, else the default, which concatenates
    // same-named tables with the swept values as leading columns.
    std::function<std::vector<report::Table>(Aggregation&)> aggregate = {};
    // True when each run's first table is one row, in the same columns for
    // every run (the kind's runs table): the runner keeps those rows in a
    // compact store (runner/run_rows.h), not as Tables, and the kind's
    // aggregate reads them through Aggregation::run_cell. Needs an
    // aggregate of the kind's own.
    bool one_row_runs = false;
    std::optional<SeedStatistics> seed_statistics = {};
    // True when runs write their models under run.artifacts (sweep --save-weights).
    bool saves_weights = false;
    // False for kinds whose runs draw nothing at random: every seed would
    // repeat the same run, so a config may name one seed at most.
    bool random = true;
    // Optional figures for `sweep --plot DIR`, from the plan and its final
    // tables, showing what `choice` asks where the kind takes a choice.
    std::function<void(const Plan&, const std::vector<report::Table>&, const std::string&, const PlotChoice&)> plot = {};
    // Set by a kind whose `plot` draws what a PlotChoice names: refuses
    // (ffn::Error) a choice the plan has no run for. Empty: the kind takes
    // no choice.
    std::function<void(const Plan&, const PlotChoice&)> validate_plot_choice = {};
    // Optional: a run's cost in the kind's own units (steps x samples x
    // width, say), proportional to its time: `sweep --shard` balances it,
    // and the time estimate multiplies it by a measured speed
    // (runner/estimate.h). It depends on the run's point, not its seed.
    // Empty: every run costs the same.
    std::function<double(const Run&)> cost = {};
    // Optional: what a run's speed per unit of cost depends on that `cost`
    // does not capture (the toy model's n, m and batch: the products'
    // efficiency on tiny shapes follows no simple formula). The estimate
    // keeps a speed per mix of classes a plan holds (one class for most
    // plans). Empty: one speed for the kind.
    std::function<std::string(const Run&)> speed_class = {};
    // Optional: the runs of one point cost as a multiple of this many (the
    // lanes of a register that run_batch fills with runs: 10 seeds cost
    // what 16 do). Empty: each run its own cost.
    std::function<std::size_t()> cost_lanes = {};
    // Optional, with cost_lanes: the part of `cost` a run pays alone,
    // outside the lanes (the width sweep counts each net's kinks on its own
    // grid), so that 10 seeds of a dense grid cost 10 grids, not 16.
    std::function<double(const Run&)> cost_alone = {};
    // Optional: the PyTorch reference of `bench sweep` (TorchNets).
    std::function<TorchNets(const Plan&)> torch_nets = {};
    // Optional: the floating-point operations a run's arithmetic does (its
    // multiplies and adds), which `bench sweep` sets against the FMA peak.
    std::function<double(const Run&)> flops = {};
    // Optional: a run to watch as it trains, the page of `ffn-lab serve`.
    std::optional<LiveKind> live = {};
};

// Runs that differ only in their seed, grouped, in grid order: the unit over
// which seed statistics are taken.
std::vector<std::vector<std::size_t>> seed_groups(const Plan& plan);

// What a plan's runs are computed in, among those with include[i] true:
// single runs, or for a kind that batches (run_batch) slices of at most
// batch_runs runs of one seed group, in grid order. execute() runs them;
// sweep --shard hands them out whole.
std::vector<std::vector<std::size_t>> work_units(const Plan& plan, const std::vector<bool>& include);

}  // namespace ffn::runner
