// planted_features: doc 001's "clean separation is a result of training"
// (claim S6) made measurable. Inputs are sparse combinations of n planted
// unit directions in R^d (n may exceed d: superposition); the target is a
// fixed function of the feature strengths written back along the same
// directions; a d-m-d MLP is trained on it with minibatch Adam. The same
// units are measured at initialisation and after training, on held-out
// probe inputs and on one-feature probes, so the two distributions differ
// only by what training did.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>

#include "analysis/units.h"
#include "core/stats.h"
#include "experiments/planted_features/plot.h"
#include "experiments/support/planted_task.h"
#include "runner/experiment.h"
#include "train/fit.h"

namespace ffn::experiments::planted_features {

namespace {

using report::Cell;
using report::ColumnType;

const std::vector<std::string> kStages = {"init", "trained"};

// The metrics a reader compares, with the way 001's sentence says training
// moves them: fewer inputs fire a unit, one feature explains more of it, it
// answers fewer features, its read vector lies closer to one direction.
// (analysis::profile_units defines them.)
using analysis::UnitProfile;
struct Metric {
    const char* name;
    bool up;         // the way the sentence says training moves it
    ColumnType type;  // of a unit's value
    Cell (*of)(const UnitProfile&);
};
Cell count_cell(const std::optional<std::size_t>& v) { return v ? Cell{static_cast<std::int64_t>(*v)} : Cell{}; }
const std::vector<Metric> kMetrics = {
    {"firing", false, ColumnType::real, [](const UnitProfile& u) { return Cell{u.firing}; }},
    {"selectivity", true, ColumnType::real, [](const UnitProfile& u) { return u.selectivity ? Cell{*u.selectivity} : Cell{}; }},
    // Not "features": that is the swept key of the planted directions, which
    // the per-unit table must still show beside it.
    {"features_per_unit", false, ColumnType::integer, [](const UnitProfile& u) { return count_cell(u.features); }},
    {"alignment", true, ColumnType::real, [](const UnitProfile& u) { return Cell{u.alignment}; }},
};

std::vector<double> values_of(const std::vector<UnitProfile>& units, const Metric& metric) {
    std::vector<double> v;
    for (const auto& u : units)
        if (const auto x = report::as_number(metric.of(u))) v.push_back(*x);
    return v;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const planted::Task<T> task = planted::make_task<T>(run);
    nn::MLP<T> mlp = planted::make_model<T>(run);
    const std::vector<UnitProfile> at_init = analysis::profile_units(mlp, task.x_probe, task.directions);
    const train::FitRecord record = planted::train_model(run, mlp, task);
    const planted::Fit fit = planted::score(mlp, task, record);
    // A model that diverged has no trained units to report; one that does
    // no better than the mean (fit.learned false) is reported, and left out
    // of the comparison, whose dead units would read as separation.
    const std::vector<UnitProfile> trained =
        fit.usable ? analysis::profile_units(mlp, task.x_probe, task.directions) : std::vector<UnitProfile>{};

    report::Table r("run");
    r.add_column("status", ColumnType::text).add_column("probe_nmse", ColumnType::real, 4).add_column("learned", ColumnType::boolean);
    std::vector<Cell> cells = {record.status, fit.usable ? Cell{fit.nmse} : Cell{}, fit.learned};
    for (const Metric& metric : kMetrics)
        for (std::size_t s = 0; s < kStages.size(); ++s) {
            r.add_column(fmt::format("{}_{}", metric.name, kStages[s]), ColumnType::real, 4);
            const std::vector<double> v = values_of(s == 0 ? at_init : trained, metric);
            cells.push_back(v.empty() ? Cell{} : Cell{median(v)});
        }
    r.add_row(std::move(cells));

    report::Table units("units");
    units.add_column("stage", ColumnType::text).add_column("unit", ColumnType::integer);
    for (const Metric& metric : kMetrics) units.add_column(metric.name, metric.type, 4);
    units.add_column("best_feature", ColumnType::integer);
    units.add_key("stage");
    units.add_key("unit");
    for (std::size_t s = 0; s < kStages.size(); ++s) {
        const auto& list = s == 0 ? at_init : trained;
        for (std::size_t j = 0; j < list.size(); ++j) {
            std::vector<Cell> row = {kStages[s], static_cast<std::int64_t>(j)};
            for (const Metric& metric : kMetrics) row.push_back(metric.of(list[j]));
            row.push_back(count_cell(list[j].best_feature));
            units.add_row(std::move(row));
        }
    }
    return {r, units};
}


// Per swept point, over the seeds whose model learned the task: each
// metric's distribution over every unit, at init and trained side by side
// (10th, 50th, 90th percentiles; a unit no one-feature probe moves has no
// selectivity or features and is not counted there), and the change of
// each unit against itself: the median of trained - init over all units,
// and the seeds in which that median goes the way 001's sentence says.
// Pairing a unit with itself matters for firing, whose value at init is
// mostly the sign of the unit's bias: medians of the two stages taken
// apart would compare different units. The runs' per-unit rows stay in
// `units`, their medians in `runs`.
std::vector<report::Table> aggregate(runner::Aggregation& a) {
    report::Table t("init_vs_trained");
    a.add_swept_columns(t);
    t.add_column("metric", ColumnType::text).add_column("expected", ColumnType::text);
    t.add_key("metric");
    for (const char* stage : {"init", "trained"}) {
        t.add_column(fmt::format("{}_units", stage), ColumnType::integer);
        for (const char* q : {"q10", "median", "q90"}) t.add_column(fmt::format("{}_{}", stage, q), ColumnType::real, 4);
    }
    t.add_column("change_median", ColumnType::real, 4);
    t.add_column("seeds", ColumnType::integer).add_column("seeds_moved", ColumnType::integer).add_column("not_learned", ColumnType::integer);

    for (const auto& group : a.seed_groups()) {
        for (const Metric& metric : kMetrics) {
            std::vector<double> pooled[2], change;
            std::int64_t moved = 0, seeds = 0, not_learned = 0;
            for (std::size_t i : group) {
                if (a.per_run[i].front().at(0, "learned") != Cell{true}) {
                    ++not_learned;
                    continue;
                }
                ++seeds;
                const report::Table& u = a.per_run[i][1];
                // Rows: every unit at init, then every unit trained.
                const std::size_t m = u.row_count() / 2;
                std::vector<double> mine;
                for (std::size_t j = 0; j < m; ++j) {
                    const auto before = report::as_number(u.at(j, metric.name)), after = report::as_number(u.at(m + j, metric.name));
                    if (before) pooled[0].push_back(*before);
                    if (after) pooled[1].push_back(*after);
                    if (before && after) mine.push_back(*after - *before);
                }
                change.insert(change.end(), mine.begin(), mine.end());
                if (!mine.empty() && (metric.up ? median(mine) > 0 : median(mine) < 0)) ++moved;
            }
            auto row = a.swept_cells(group.front());
            row.insert(row.end(), {std::string(metric.name), std::string(metric.up ? "up" : "down")});
            for (auto& v : pooled) {
                row.push_back(static_cast<std::int64_t>(v.size()));
                for (double q : {10.0, 50.0, 90.0}) row.push_back(v.empty() ? Cell{} : Cell{percentile(v, q)});
            }
            row.push_back(change.empty() ? Cell{} : Cell{median(change)});
            row.insert(row.end(), {seeds, moved, not_learned});
            t.add_row(std::move(row));
        }
    }
    // Firing is two clumps at init (a unit's bias sign decides whether it is
    // almost never or almost always on), so a median says little: how many
    // units of the seeds that learned sit below and above half, and how
    // many between a quarter and three quarters, at init and trained.
    report::Table clumps("firing_clumps");
    a.add_swept_columns(clumps);
    for (const char* stage : {"init", "trained"})
        for (const char* c : {"below_half", "above_half", "between_quarters"}) clumps.add_column(fmt::format("{}_{}", stage, c), ColumnType::integer);
    for (const auto& group : a.seed_groups()) {
        std::int64_t counts[2][3] = {};
        for (std::size_t i : group) {
            if (a.per_run[i].front().at(0, "learned") != Cell{true}) continue;
            const report::Table& u = a.per_run[i][1];
            const std::size_t m = u.row_count() / 2;  // every unit at init, then every unit trained
            for (std::size_t r = 0; r < u.row_count(); ++r) {
                const auto f = report::as_number(u.at(r, "firing"));
                if (!f) continue;
                auto& c = counts[r < m ? 0 : 1];
                ++c[*f < 0.5 ? 0 : 1];
                c[2] += *f >= 0.25 && *f <= 0.75;
            }
        }
        auto row = a.swept_cells(group.front());
        for (const auto& stage : counts)
            for (const std::int64_t c : stage) row.push_back(c);
        clumps.add_row(std::move(row));
    }
    report::Table runs = a.per_run_rows();
    // The per-unit rows, every run's, named by the swept values and the
    // seed (concatenated moves the runs' tables: it comes last).
    report::Table units = a.concatenated("units");
    units.set_per_item();
    return {t, clumps, std::move(units), runs};
}

}  // namespace

runner::ExperimentKind make() {
    runner::Schema schema;
    planted::add_keys(schema);
    return {.name = "planted_features",
            .description = "units of an MLP trained on sparse combinations of planted directions: firing, selectivity, features per unit and alignment, at init and trained",
            .schema = std::move(schema),
            .headlines = {{"init_vs_trained", {"metric", "init_median", "trained_median", "change_median", "seeds_moved", "seeds"}}},
            .validate = [](const runner::Plan& plan) { planted::refuse_bad_tasks(plan); },
            .run = by_dtype<compute<float>, compute<double>>,
            .aggregate = aggregate,
            .plot = plot_planted,
            .cost = planted::training_cost};
}

}  // namespace ffn::experiments::planted_features
