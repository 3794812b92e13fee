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
#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/stats.h"
#include "experiments/support/run.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "runner/experiment.h"
#include "train/fit.h"

namespace ffn::experiments::planted_features {

namespace {

using report::Cell;
using report::ColumnType;

const std::vector<std::string> kTargets = {"abs", "strength"};
const std::vector<std::string> kStages = {"init", "trained"};

template <class T>
struct Task {
    std::vector<std::vector<double>> directions;  // n unit vectors in R^d
    nn::Matrix<T> x_train, y_train, x_probe, y_probe;
};

// Rows of sparse feature combinations: feature i is present with
// probability `density`, with a strength s ~ U[-1, 1]; the input is
// sum_i s_i f_i, the target sum_i g(s_i) f_i with g = |.| ("abs", a
// nonlinearity per feature the MLP must compute) or the identity
// ("strength", a linear map that asks no unit to pick a feature).
template <class T>
void draw_rows(const std::vector<std::vector<double>>& f, double density, bool abs_target, Rng& rng, std::size_t rows,
               nn::Matrix<T>& x, nn::Matrix<T>& y) {
    const std::size_t d = f.front().size();
    x = nn::Matrix<T>::from_shape({rows, d});
    y = nn::Matrix<T>::from_shape({rows, d});
    std::vector<double> xr(d), yr(d);
    for (std::size_t r = 0; r < rows; ++r) {
        std::fill(xr.begin(), xr.end(), 0.0);
        std::fill(yr.begin(), yr.end(), 0.0);
        for (const auto& fi : f) {
            if (rng.uniform01() >= density) continue;
            const double s = rng.uniform(-1.0, 1.0), g = abs_target ? std::abs(s) : s;
            for (std::size_t k = 0; k < d; ++k) {
                xr[k] += s * fi[k];
                yr[k] += g * fi[k];
            }
        }
        for (std::size_t k = 0; k < d; ++k) {
            x.data()[r * d + k] = static_cast<T>(xr[k]);
            y.data()[r * d + k] = static_cast<T>(yr[k]);
        }
    }
}

// The directions and data of a run depend on its seed and the task's keys,
// not on the model: relu and gelu runs of one seed see the same task.
template <class T>
Task<T> make_task(const runner::Run& run) {
    const auto d = static_cast<std::size_t>(run.integer("d")), n = static_cast<std::size_t>(run.integer("features"));
    const double density = run.number("density");
    const std::string name = fmt::format("planted d={} features={} density={} target={}", d, n, density, run.string("target"));
    Task<T> task;
    Rng dir = Rng::stream(run.seed, fnv1a64(fmt::format("planted d={} features={}", d, n)), "directions");
    task.directions.assign(n, std::vector<double>(d));
    for (auto& fi : task.directions) {
        double norm = 0;
        for (auto& v : fi) {
            v = dir.normal();
            norm += v * v;
        }
        // A zero draw has probability 0; the guard keeps the division defined.
        norm = std::sqrt(std::max(norm, 1e-300));
        for (auto& v : fi) v /= norm;
    }
    Rng data = Rng::stream(run.seed, fnv1a64(name), "data");
    const bool abs_target = run.string("target") == "abs";
    draw_rows(task.directions, density, abs_target, data, static_cast<std::size_t>(run.integer("train_samples")),
              task.x_train, task.y_train);
    draw_rows(task.directions, density, abs_target, data, static_cast<std::size_t>(run.integer("probe_samples")),
              task.x_probe, task.y_probe);
    return task;
}

// The metrics a reader compares, with the way 001's sentence says training
// moves them: fewer inputs fire a unit, one feature explains more of it, it
// answers fewer features, its read vector lies closer to one direction.
// (analysis::profile_units defines them.)
using analysis::UnitProfile;
struct Metric {
    const char* name;
    const char* expected;  // "down" or "up"
    ColumnType type;       // of a unit's value
    Cell (*of)(const UnitProfile&);
};
Cell count_cell(const std::optional<std::size_t>& v) { return v ? Cell{static_cast<std::int64_t>(*v)} : Cell{}; }
const std::vector<Metric> kMetrics = {
    {"firing", "down", ColumnType::real, [](const UnitProfile& u) { return Cell{u.firing}; }},
    {"selectivity", "up", ColumnType::real, [](const UnitProfile& u) { return u.selectivity ? Cell{*u.selectivity} : Cell{}; }},
    {"features", "down", ColumnType::integer, [](const UnitProfile& u) { return count_cell(u.features); }},
    {"alignment", "up", ColumnType::real, [](const UnitProfile& u) { return Cell{u.alignment}; }},
};

std::vector<double> values_of(const std::vector<UnitProfile>& units, const Metric& metric) {
    std::vector<double> v;
    for (const auto& u : units)
        if (const auto x = report::as_number(metric.of(u))) v.push_back(*x);
    return v;
}

// The target's variance per coordinate, averaged over coordinates: the
// error of predicting each coordinate's mean, on mse_loss's scale.
template <class T>
double variance_of(const nn::Matrix<T>& Y) {
    const std::size_t rows = Y.shape()[0], cols = Y.shape()[1];
    double total = 0;
    for (std::size_t k = 0; k < cols; ++k) {
        double sum = 0, sq = 0;
        for (std::size_t r = 0; r < rows; ++r) {
            const double y = Y.data()[r * cols + k];
            sum += y, sq += y * y;
        }
        total += sq / static_cast<double>(rows) - (sum / static_cast<double>(rows)) * (sum / static_cast<double>(rows));
    }
    return total / static_cast<double>(cols);
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const Task<T> task = make_task<T>(run);
    const auto d = static_cast<std::size_t>(run.integer("d")), m = static_cast<std::size_t>(run.integer("m"));
    nn::MLP<T> mlp({d, m, d}, nn::parse_activation(run.string("activation")));
    Rng init = Rng::stream(run.seed, fnv1a64(fmt::format("planted d={} m={}", d, m)), "init");
    nn::initialize(mlp, {nn::InitScheme::torch_default}, init);
    const std::vector<UnitProfile> at_init = analysis::profile_units(mlp, task.x_probe, task.directions);

    train::Optimizer<T> opt(mlp.parameters(), {train::OptimizerKind::adam, run.number("lr")});
    train::FitSpec spec;
    spec.steps = run.integer("steps");
    spec.batch_size = run.integer("batch_size");
    spec.record_every = std::max<long>(1, spec.steps);
    Rng shuffle = Rng::stream(run.seed, 0, "shuffle");
    const train::FitRecord record = train::fit(mlp, opt, task.x_train, task.y_train, spec, shuffle);
    const double probe_mse = train::evaluate_loss(mlp, task.x_probe, task.y_probe);
    const bool ok = record.status != "diverged" && std::isfinite(probe_mse);
    const std::vector<UnitProfile> trained = analysis::profile_units(mlp, task.x_probe, task.directions);

    // Per-sample MSE over the target's variance per coordinate: 1 is the
    // constant predictor's error, 0 a perfect fit.
    const double var = variance_of(task.y_probe);
    report::Table r("run");
    r.add_column("status", ColumnType::text).add_column("probe_nmse", ColumnType::real, 4);
    std::vector<Cell> cells = {record.status, ok && var > 0 ? Cell{probe_mse / var} : Cell{}};
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

std::vector<report::Table> run_planted(const runner::Run& run) {
    return with_dtype(run, [&]<class T>() { return compute<T>(run); });
}

// Per swept point, each metric's distribution over every unit of every
// seed, at init and trained side by side (10th, 50th, 90th percentiles),
// and in how many seeds the median unit moved the way 001's sentence says.
// The runs' per-unit rows stay in `units`, their medians in `runs`.
std::vector<report::Table> aggregate(runner::Aggregation& a) {
    report::Table t("init_vs_trained");
    a.add_swept_columns(t);
    t.add_column("metric", ColumnType::text).add_column("expected", ColumnType::text);
    t.add_key("metric");
    for (const char* stage : {"init", "trained"}) {
        t.add_column(fmt::format("{}_units", stage), ColumnType::integer);
        for (const char* q : {"q10", "median", "q90"}) t.add_column(fmt::format("{}_{}", stage, q), ColumnType::real, 4);
    }
    t.add_column("seeds", ColumnType::integer).add_column("seeds_moved", ColumnType::integer);

    for (const auto& group : a.seed_groups()) {
        for (const Metric& metric : kMetrics) {
            std::vector<double> pooled[2];
            std::int64_t moved = 0, seeds = 0;
            for (std::size_t i : group) {
                const report::Table& r = a.per_run[i].front();
                const auto before = report::as_number(r.at(0, fmt::format("{}_init", metric.name)));
                const auto after = report::as_number(r.at(0, fmt::format("{}_trained", metric.name)));
                if (report::as_number(r.at(0, "probe_nmse"))) ++seeds;
                else continue;  // a diverged run's units say nothing of training
                if (before && after && (std::string(metric.expected) == "up" ? *after > *before : *after < *before)) ++moved;
                const report::Table& u = a.per_run[i][1];
                for (std::size_t k = 0; k < u.row_count(); ++k)
                    if (const auto x = report::as_number(u.at(k, metric.name)))
                        pooled[report::format_cell(u.at(k, "stage"), 0) == "trained"].push_back(*x);
            }
            auto row = a.swept_cells(group.front());
            row.insert(row.end(), {std::string(metric.name), std::string(metric.expected)});
            for (auto& v : pooled) {
                row.push_back(static_cast<std::int64_t>(v.size()));
                for (double q : {10.0, 50.0, 90.0}) row.push_back(v.empty() ? Cell{} : Cell{percentile(v, q)});
            }
            row.insert(row.end(), {seeds, moved});
            t.add_row(std::move(row));
        }
    }
    report::Table runs = a.per_run_rows();
    // The per-unit rows, every run's, named by the swept values and the
    // seed (concatenate_runs moves the runs' tables: it comes last).
    std::vector<report::Table> joined = a.concatenate_runs();
    auto units = std::find_if(joined.begin(), joined.end(), [](const report::Table& x) { return x.name() == "units"; });
    units->set_long_form();
    return {t, std::move(*units), runs};
}

}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    schema.add({.path = "d", .type = KeyType::integer, .default_value = 20, .min = 2.0, .max = 1024.0,
                .help = "input and output width"});
    schema.add({.path = "features", .type = KeyType::integer, .default_value = 40, .min = 1.0, .max = 4096.0,
                .help = "planted unit directions in R^d (more than d: superposition)"});
    schema.add({.path = "density", .type = KeyType::number, .default_value = 0.05, .min = 0.0, .max = 1.0,
                .help = "probability that a feature is present in an input"});
    schema.add({.path = "target", .type = KeyType::string, .default_value = "abs", .choices = kTargets,
                .help = "abs: sum_i |s_i| f_i (a nonlinearity per feature); strength: sum_i s_i f_i, the input itself"});
    schema.add({.path = "m", .type = KeyType::integer, .default_value = 80, .min = 1.0, .max = 16384.0,
                .help = "hidden units"});
    schema.add({.path = "activation", .type = KeyType::string, .default_value = "relu", .choices = nn::activation_names(),
                .help = "the hidden layer's activation"});
    schema.add({.path = "train_samples", .type = KeyType::integer, .default_value = 8192, .min = 1.0, .max = 1e6,
                .help = "training inputs"});
    schema.add({.path = "probe_samples", .type = KeyType::integer, .default_value = 4096, .min = 1.0, .max = 1e6,
                .help = "held-out inputs on which units fire and the fit is scored"});
    schema.add({.path = "steps", .type = KeyType::integer, .default_value = 4000, .min = 0.0, .max = 1e7, .help = "Adam steps"});
    schema.add({.path = "batch_size", .type = KeyType::integer, .default_value = 256, .min = 0.0, .max = 1e6,
                .help = "minibatch rows (0: full batch)"});
    schema.add({.path = "lr", .type = KeyType::number, .default_value = 3e-3, .min = 0.0, .help = "Adam's learning rate"});
    schema.add({.path = "dtype", .type = KeyType::string, .default_value = "float32", .choices = {"float32", "float64"},
                .help = "scalar type of training"});
    return {.name = "planted_features",
            .description = "units of an MLP trained on sparse combinations of planted directions: firing, selectivity, features per unit and alignment, at init and trained",
            .schema = std::move(schema),
            .headlines = {{"init_vs_trained", {"metric", "init_median", "trained_median", "seeds_moved", "seeds"}}},
            .validate =
                [](const runner::Plan& plan) {
                    for (const auto& r : plan.runs)
                        if (r.number("density") == 0)
                            throw Error("key 'density': 0 plants no feature in any input; it must be above 0");
                    // The data (two matrices of rows x d per split), the
                    // step's rows x m activations and the one-feature probes.
                    refuse_runs_beyond_memory(plan, {"train_samples", "probe_samples", "d", "m", "features"}, [](const runner::Run& r) {
                        const double d = static_cast<double>(r.integer("d")), m = static_cast<double>(r.integer("m"));
                        const double rows = static_cast<double>(r.integer("train_samples") + r.integer("probe_samples"));
                        const double n = static_cast<double>(r.integer("features"));
                        return (4 * rows * d + 4 * rows * m + 3 * n * (d + m) + 8 * d * m) * (r.is_float64() ? 8 : 4);
                    });
                },
            .run = run_planted,
            .aggregate = aggregate,
            .cost = [](const runner::Run& r) {
                const double rows = static_cast<double>(r.integer("batch_size") > 0 ? std::min(r.integer("batch_size"), r.integer("train_samples"))
                                                                                     : r.integer("train_samples"));
                return static_cast<double>(r.integer("steps")) * rows * static_cast<double>(r.integer("d") * r.integer("m"));
            }};
}

}  // namespace ffn::experiments::planted_features
