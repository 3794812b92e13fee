// toy_superposition: the toy model of Elhage et al., "Toy Models of
// Superposition" (2022), which doc 003 points to. n features, m < n hidden
// dimensions, x' = ReLU(W^T W x + b), trained with Adam on sparse inputs:
// each feature is active with probability 1 - S, at a strength U[0, 1).
// The loss weighs feature i by its importance I_i = decay^i. Per run: which
// features the model represents (||W_i|| > 0.5), how many dimensions each
// takes (m / ||W||_F^2, and per feature D_i), how much the others interfere
// with it, and for m = 2 the geometry of the columns of W (an orthogonal
// pair when dense, a regular pentagon when sparse, for n = 5).
#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numbers>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/hash.h"
#include "core/math.h"
#include "core/rng.h"
#include "core/stats.h"
#include "experiments/support/run.h"
#include "experiments/toy_superposition/plot.h"
#include "experiments/toy_superposition/two_in_one.h"
#include "report/text.h"
#include "runner/experiment.h"
#include "train/optimizer.h"
#include "train/toy_model.h"

namespace ffn::experiments::toy_superposition {

namespace {

using report::Cell;
using report::ColumnType;
namespace toy_model = train::toy_model;

// The thresholds the README states: a feature is represented when its
// column of W is longer than 0.5 (the paper's choice: a learned feature's
// column has length near 1), and a shape is recognised when every angle is
// within these many degrees of the ideal one.
constexpr double kRepresented = 0.5;
constexpr double kOrthogonalDegrees = 5;
constexpr double kPolygonDegrees = 10;
// The fractions of a dimension the paper's features stick to (1: a
// dimension of its own; 3/4 a tetrahedron, 2/3 a triangle, 1/2 an antipodal
// pair, 2/5 a pentagon, 3/8 a square antiprism), largest first. A D_i is
// counted at its nearest fraction, or below them all when it is nearer to
// 1/4 than to 3/8 would leave room for (under 3/8 less half the gap to
// 2/5).
const std::vector<std::pair<std::string, double>> kFractions = {
    {"1", 1.0}, {"3_4", 0.75}, {"2_3", 2.0 / 3}, {"1_2", 0.5}, {"2_5", 0.4}, {"3_8", 0.375}};
constexpr double kBelowFractions = 0.375 - 0.0125;

struct Trained {
    std::size_t n = 0, m = 0;
    std::vector<double> W, b;  // W[k * n + i]: hidden dimension k, feature i
    std::vector<double> importance;
    double loss = 0;  // on held-out inputs, in double
    double column(std::size_t i, std::size_t k) const { return W[k * n + i]; }
};

// The held-out inputs, feature-major (x[i * batch + s]): feature i of
// sample s is active when u < p, with strength u / p, which given u < p is
// uniform on [0, 1); one draw per value. (The training batches come from
// train/toy_model.h's counter-based draws.)
template <class T>
void held_out_batch(Rng& rng, double p, std::size_t n, std::size_t batch, T* x) {
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t s = 0; s < batch; ++s) {
            const double u = rng.uniform01();
            x[i * batch + s] = static_cast<T>(toy_model::value_or_zero(u < p, u / p));
        }
}

std::vector<double> importances(const runner::Run& run, std::size_t n) {
    std::vector<double> I(n);
    double v = 1;
    for (std::size_t i = 0; i < n; ++i, v *= run.number("importance_decay")) I[i] = v;
    return I;
}

// Training: the runs of one seed group as one stack of instances, each
// with its own initial W and its own fresh batch every step, the gradient
// of train/toy_model.h's loss (the fused pass for the models it fits, the
// products otherwise), the library's Adam over the stack. An instance's
// bits do not depend on the others (each model's own pass, gemm_batched's
// contract, elementwise Adam), so a run is the same alone or batched.
template <class T>
std::vector<Trained> train(std::span<const runner::Run> runs) {
    const runner::Run& first = runs.front();
    const auto n = static_cast<std::size_t>(first.integer("features")), m = static_cast<std::size_t>(first.integer("hidden"));
    const auto batch = static_cast<std::size_t>(first.integer("batch_size"));
    const std::size_t I = runs.size();
    const double p = 1 - first.number("sparsity");
    const std::vector<double> importance = importances(first, n);
    std::vector<T> W(I * m * n);
    std::vector<std::uint64_t> keys(I);
    // Xavier normal over the m x n matrix, as the paper's code initialises W.
    const double sd = std::sqrt(2.0 / static_cast<double>(n + m));
    for (std::size_t r = 0; r < I; ++r) {
        Rng init = Rng::stream(runs[r].seed, fnv1a64("toy_superposition W"), "init");
        for (std::size_t k = 0; k < m * n; ++k) W[r * m * n + k] = static_cast<T>(sd * init.normal());
        keys[r] = Rng::stream_key(runs[r].seed, fnv1a64("toy_superposition batches"), "data");
    }
    toy_model::Stack<T> stack({n, m, batch, I}, std::move(keys), std::move(W), p, importance, first.number("lr"));
    while (stack.steps_taken() < static_cast<std::uint64_t>(first.integer("steps"))) stack.step();
    // One held-out set per point of the grid, the same for every model
    // there: the lowest loss then picks a model, not a luckier sample. It
    // is drawn from a stream named by what the inputs depend on (n and S),
    // never by a seed.
    const auto eval = static_cast<std::size_t>(first.integer("eval_samples"));
    Rng held = Rng::stream(0, fnv1a64(fmt::format("toy_superposition held-out n={} S={}", n, report::number_text(first.number("sparsity")))), "data");
    std::vector<double> xe(n * eval);
    held_out_batch(held, p, n, eval, xe.data());
    std::vector<Trained> out(I);
    for (std::size_t r = 0; r < I; ++r) {
        Trained& t = out[r];
        t.n = n;
        t.m = m;
        t.W.assign(stack.W(r).begin(), stack.W(r).end());
        t.b.assign(stack.b(r).begin(), stack.b(r).end());
        t.importance = importance;
        // Held-out loss in double from the trained weights.
        t.loss = toy_model::loss({n, m, eval}, t.W.data(), t.b.data(), xe.data(), importance.data());
    }
    return out;
}

double norm(const Trained& t, std::size_t i) {
    double s = 0;
    for (std::size_t k = 0; k < t.m; ++k) s += t.column(i, k) * t.column(i, k);
    return std::sqrt(s);
}

double dot(const Trained& t, std::size_t i, std::size_t j) {
    double s = 0;
    for (std::size_t k = 0; k < t.m; ++k) s += t.column(i, k) * t.column(j, k);
    return s;
}

// The paper's per-feature dimensionality D_i = ||W_i||^2 / sum_j (W_i_hat .
// W_j)^2 (the j = i term included), and what the others put on feature i's
// direction, sum_{j != i} (W_i_hat . W_j)^2.
double dimensionality(const Trained& t, std::size_t i) {
    const double ni = norm(t, i);
    if (ni == 0) return 0;
    double s = 0;
    for (std::size_t j = 0; j < t.n; ++j) s += (dot(t, i, j) / ni) * (dot(t, i, j) / ni);
    return ni * ni / s;
}

double interference(const Trained& t, std::size_t i) {
    const double ni = norm(t, i);
    if (ni == 0) return 0;
    double s = 0;
    for (std::size_t j = 0; j < t.n; ++j)
        if (j != i) s += (dot(t, i, j) / ni) * (dot(t, i, j) / ni);
    return s;
}

double angle_degrees(const Trained& t, std::size_t i) {
    const double a = math::atan2(t.column(i, 1), t.column(i, 0)) * 180 / std::numbers::pi;  // the same bits on every CPU
    return a < 0 ? a + 360 : a;
}

// For m = 2: the represented columns' directions as a shape. Two columns
// at 90 degrees are an orthogonal pair; k >= 3 columns evenly spread (each
// gap between neighbours 360/k) a regular k-gon. Returns the shape's name
// ("" for none) and the largest deviation in degrees from its ideal angles.
std::pair<std::string, double> shape_of(const Trained& t) {
    std::vector<double> angles;
    for (std::size_t i = 0; i < t.n; ++i)
        if (norm(t, i) > kRepresented) angles.push_back(angle_degrees(t, i));
    std::sort(angles.begin(), angles.end());
    const std::size_t k = angles.size();
    if (k < 2) return {"", 0.0};
    if (k == 2) {
        const double between = std::min(angles[1] - angles[0], 360 - (angles[1] - angles[0]));
        const double error = std::fabs(between - 90);
        if (error <= kOrthogonalDegrees) return {"orthogonal pair", error};
        if (std::fabs(between - 180) <= kOrthogonalDegrees) return {"antipodal pair", std::fabs(between - 180)};
        return {"irregular", error};
    }
    double error = 0;
    for (std::size_t a = 0; a < k; ++a) {
        const double gap = a + 1 < k ? angles[a + 1] - angles[a] : angles[0] + 360 - angles[k - 1];
        error = std::max(error, std::fabs(gap - 360.0 / static_cast<double>(k)));
    }
    return {error <= kPolygonDegrees ? "regular " + std::to_string(k) + "-gon" : "irregular", error};
}

// For two features in one dimension, the paper's phase diagram: neither
// represented, one of them with the dimension to itself, or both as an
// antipodal pair (W_0 and W_1 of opposite signs).
std::string phase_of(const Trained& t) {
    const bool a = norm(t, 0) > kRepresented, b = norm(t, 1) > kRepresented;
    if (a && b) return t.column(0, 0) * t.column(1, 0) < 0 ? "antipodal" : "both, same side";
    if (a) return "feature 0 dedicated";
    if (b) return "feature 1 dedicated";
    return "none";
}

// Per feature: its column's length and direction, D_i, interference, bias.
report::Table features_table(const Trained& t) {
    report::Table features("features");
    features.add_column("feature", ColumnType::integer).add_key("feature");
    features.add_column("importance", ColumnType::real)
        .add_column("norm", ColumnType::real)
        .add_column("represented", ColumnType::boolean)
        .add_column("dimensionality", ColumnType::real)
        .add_column("interference", ColumnType::real)
        .add_column("angle_deg", ColumnType::real, 4)
        .add_column("bias", ColumnType::real);
    for (std::size_t k = 0; k < t.m; ++k) features.add_column("w_" + std::to_string(k), ColumnType::real);
    for (std::size_t i = 0; i < t.n; ++i) {
        std::vector<Cell> row = {static_cast<std::int64_t>(i), t.importance[i], norm(t, i), norm(t, i) > kRepresented,
                                 dimensionality(t, i), interference(t, i),
                                 t.m == 2 ? Cell{angle_degrees(t, i)} : Cell{}, t.b[i]};
        for (std::size_t k = 0; k < t.m; ++k) row.push_back(t.column(i, k));
        features.add_row(std::move(row));
    }
    return features;
}

// Memory per instance of a stack: its batch's inputs, pre-activations,
// hidden values and their gradients, and W, b, their gradients and Adam's
// two moments, in float64 at most. The held-out inputs and the terms of
// the held-out loss (double, toy_model::loss) are one run's at a time.
double training_bytes(const runner::Run& r) {
    const double n = static_cast<double>(r.integer("features")), m = static_cast<double>(r.integer("hidden"));
    return ((2 * n + 2 * m) * static_cast<double>(r.integer("batch_size")) + 4 * (m + 1) * n) * 8;
}

double held_out_bytes(const runner::Run& r) {
    const double n = static_cast<double>(r.integer("features"));
    return 2 * n * static_cast<double>(r.integer("eval_samples")) * 8;  // the inputs and the loss's terms (toy_model::loss)
}

std::vector<report::Table> tables_of(const Trained& t) {
    report::Table summary("summary");
    summary.add_column("loss", ColumnType::real)
        .add_column("represented", ColumnType::integer)
        .add_column("dims_per_feature", ColumnType::real)
        .add_column("shape", ColumnType::text)
        .add_column("shape_error_deg", ColumnType::real, 3)
        .add_column("phase", ColumnType::text)
        .add_column("status", ColumnType::text);
    // A model whose loss or weights are not finite (a learning rate too
    // large) has no geometry to read: its row says so and the points table
    // leaves it out.
    bool finite = std::isfinite(t.loss);
    for (const double v : t.W) finite = finite && std::isfinite(v);
    for (const double v : t.b) finite = finite && std::isfinite(v);
    if (!finite) {
        summary.add_row({t.loss, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, std::string("diverged")});
        return {summary, features_table(t)};
    }
    double frobenius = 0;
    std::int64_t represented = 0;
    for (std::size_t i = 0; i < t.n; ++i) {
        frobenius += norm(t, i) * norm(t, i);
        represented += norm(t, i) > kRepresented ? 1 : 0;
    }
    Cell shape{}, shape_error{}, phase{};
    if (t.m == 2) {
        const auto [name, error] = shape_of(t);
        if (!name.empty()) {
            shape = name;
            shape_error = error;
        }
    }
    if (t.n == 2 && t.m == 1) phase = phase_of(t);
    summary.add_row({t.loss, represented, static_cast<double>(t.m) / frobenius, shape, shape_error, phase, std::string("ok")});
    return {summary, features_table(t)};
}

// A slice of one seed group, trained as stacks no larger than one run may
// take in memory.
std::vector<std::vector<report::Table>> run_toy_batch(std::span<const runner::Run> runs) {
    const auto per_stack = static_cast<std::size_t>(
        std::max(1.0, std::floor((kMaxRunBytes - held_out_bytes(runs.front())) / training_bytes(runs.front()))));
    std::vector<std::vector<report::Table>> out;
    for (std::size_t from = 0; from < runs.size(); from += per_stack) {
        const auto stack = runs.subspan(from, std::min(per_stack, runs.size() - from));
        for (const Trained& t : with_dtype(stack.front(), [&]<class T>() { return train<T>(stack); })) out.push_back(tables_of(t));
    }
    return out;
}


// Tables: runs (one summary row per run), features (every run's features,
// named by the swept values, seed and feature), and points: per point of
// the grid, the seeds' median of what is represented and the most common
// shape or phase with how many seeds agree.
std::vector<report::Table> aggregate_toy(runner::Aggregation& a) {
    const runner::Plan& plan = a.plan;
    const auto& per_run = a.per_run;
    report::Table runs = a.per_run_rows();

    report::Table features("features");
    features.set_long_form();
    features.set_per_item();
    a.add_swept_columns(features);
    features.add_column("seed", ColumnType::integer).add_key("seed");
    for (const auto& c : per_run.front()[1].columns()) features.add_column(c);
    features.add_key("feature");
    for (std::size_t r = 0; r < per_run.size(); ++r)
        for (const auto& row : per_run[r][1].rows()) {
            auto cells = a.swept_cells(r);
            cells.push_back(static_cast<std::int64_t>(plan.runs[r].seed));
            cells.insert(cells.end(), row.begin(), row.end());
            features.add_row(std::move(cells));
        }

    // The paper's protocol: several models per point, the lowest-loss one
    // reported, with how many of the models reach its outcome. For two
    // features in one dimension, the phase of least exact loss beside it
    // (two_in_one.h).
    const auto is_two_in_one = [&](const runner::Run& r) { return r.integer("features") == 2 && r.integer("hidden") == 1; };
    const bool two_in_one = std::any_of(plan.runs.begin(), plan.runs.end(), is_two_in_one);
    report::Table points("points");
    a.add_swept_columns(points);
    points.add_column("seeds", ColumnType::integer)
        .add_column("diverged", ColumnType::integer)
        .add_column("represented_median", ColumnType::real)
        .add_column("dims_per_feature_median", ColumnType::real)
        .add_column("outcome", ColumnType::text)
        .add_column("outcome_seeds", ColumnType::integer)
        .add_column("best_loss", ColumnType::real);
    if (two_in_one) points.add_column("optimum", ColumnType::text).add_column("optimum_loss", ColumnType::real);
    // The paper's feature geometry, of each point's lowest-loss model: how
    // many dimensions it gives a feature (D*, against 1 / (1 - S)), how many
    // of its represented features have a dimensionality D_i nearest each of
    // kFractions or below them all, and how far from the nearest fraction
    // the median one lies.
    report::Table geometry("geometry");
    a.add_swept_columns(geometry);
    geometry.add_column("inverse_density", ColumnType::real, 4)
        .add_column("best_seed", ColumnType::integer)
        .add_column("dims_per_feature", ColumnType::real, 4)
        .add_column("represented", ColumnType::integer);
    for (const auto& [name, value] : kFractions) geometry.add_column("nearest_" + name, ColumnType::integer);
    geometry.add_column("below_3_8", ColumnType::integer).add_column("distance_median", ColumnType::real, 3);
    for (const auto& group : a.seed_groups()) {
        std::vector<double> represented, dims;
        std::vector<std::pair<double, std::string>> outcomes;  // (loss, outcome) per model, in seed order
        std::int64_t diverged = 0;
        for (const std::size_t i : group) {
            const report::Table& s = per_run[i][0];
            if (std::get<std::string>(s.at(0, "status")) != "ok") {
                ++diverged;
                continue;
            }
            represented.push_back(static_cast<double>(std::get<std::int64_t>(s.at(0, "represented"))));
            dims.push_back(std::get<double>(s.at(0, "dims_per_feature")));
            const Cell& phase = s.at(0, "phase");
            const Cell& shape = s.at(0, "shape");
            outcomes.emplace_back(std::get<double>(s.at(0, "loss")),
                                  std::holds_alternative<std::string>(phase)   ? std::get<std::string>(phase)
                                  : std::holds_alternative<std::string>(shape) ? std::get<std::string>(shape)
                                                                               : std::to_string(static_cast<int>(represented.back())) + " represented");
        }
        auto cells = a.swept_cells(group.front());
        cells.push_back(static_cast<std::int64_t>(group.size()));
        cells.push_back(diverged);
        if (outcomes.empty()) {  // every seed diverged: nothing to summarise
            for (int k = 0; k < 5; ++k) cells.push_back(Cell{});
        } else {
            // The first of equal losses: the lower seed.
            const auto best = std::min_element(outcomes.begin(), outcomes.end(),
                                               [](const auto& a, const auto& b) { return a.first < b.first; });
            cells.push_back(median(represented));
            cells.push_back(median(dims));
            cells.push_back(best->second);
            cells.push_back(static_cast<std::int64_t>(
                std::count_if(outcomes.begin(), outcomes.end(), [&](const auto& o) { return o.second == best->second; })));
            cells.push_back(best->first);
        }
        if (const auto& run = plan.runs[group.front()]; two_in_one && is_two_in_one(run)) {
            const TwoInOne optimum = two_in_one_optimum(run.number("importance_decay"), run.number("sparsity"));
            cells.push_back(optimum.phase);
            cells.push_back(optimum.loss);
        } else if (two_in_one) {
            cells.push_back(Cell{});
            cells.push_back(Cell{});
        }
        points.add_row(std::move(cells));

        auto row = a.swept_cells(group.front());
        row.push_back(1 / (1 - plan.runs[group.front()].number("sparsity")));
        std::optional<std::size_t> best;
        for (const std::size_t i : group) {
            const report::Table& s = per_run[i][0];
            if (std::get<std::string>(s.at(0, "status")) != "ok") continue;
            if (!best || std::get<double>(s.at(0, "loss")) < std::get<double>(per_run[*best][0].at(0, "loss"))) best = i;
        }
        if (!best) {
            row.resize(geometry.columns().size());
            geometry.add_row(std::move(row));
            continue;
        }
        const report::Table& s = per_run[*best][0];
        std::vector<std::int64_t> nearest(kFractions.size(), 0);
        std::int64_t below = 0;
        std::vector<double> distance;
        const report::Table& f = per_run[*best][1];
        for (std::size_t k = 0; k < f.row_count(); ++k) {
            if (!std::get<bool>(f.at(k, "represented"))) continue;
            const double D = std::get<double>(f.at(k, "dimensionality"));
            if (D < kBelowFractions) {
                ++below;
                continue;
            }
            std::size_t j = 0;
            for (std::size_t c = 1; c < kFractions.size(); ++c)
                if (std::fabs(D - kFractions[c].second) < std::fabs(D - kFractions[j].second)) j = c;
            ++nearest[j];
            distance.push_back(std::fabs(D - kFractions[j].second));
        }
        row.insert(row.end(), {static_cast<std::int64_t>(plan.runs[*best].seed), s.at(0, "dims_per_feature"), s.at(0, "represented")});
        for (const std::int64_t c : nearest) row.push_back(c);
        row.push_back(below);
        row.push_back(distance.empty() ? Cell{} : Cell{median(distance)});
        geometry.add_row(std::move(row));
    }
    return {points, geometry, runs, features};
}

}  // namespace

runner::ExperimentKind make() {
    using runner::Json;
    using runner::KeyType;
    runner::Schema schema;
    schema.add({.path = "features", .type = KeyType::integer, .default_value = 5, .min = 2.0, .max = 1000.0,
                .help = "n, the number of input features"});
    schema.add({.path = "hidden", .type = KeyType::integer, .default_value = 2, .min = 1.0, .max = 1000.0,
                .help = "m, the hidden dimensions the features are squeezed into"});
    schema.add({.path = "sparsity", .type = KeyType::number, .default_value = 0.0, .min = 0.0, .max = 0.9999,
                .help = "S: each feature is zero with probability S, else U[0, 1)"});
    schema.add({.path = "importance_decay", .type = KeyType::number, .default_value = 0.9, .min = 1e-6, .max = 1e6,
                .help = "feature i's weight in the loss is importance_decay^i"});
    schema.add({.path = "steps", .type = KeyType::integer, .default_value = 10000, .min = 0.0, .max = 1e7, .help = "Adam steps"});
    schema.add({.path = "batch_size", .type = KeyType::integer, .default_value = 1024, .min = 1.0, .max = 1e6,
                .help = "fresh inputs per step"});
    schema.add({.path = "lr", .type = KeyType::number, .default_value = 1e-3, .min = 0.0, .max = 100.0, .help = "Adam's learning rate"});
    schema.add({.path = "eval_samples", .type = KeyType::integer, .default_value = 10000, .min = 1.0, .max = 1e7,
                .help = "held-out inputs for the reported loss"});
    schema.add({.path = "dtype", .type = KeyType::string, .default_value = "float32", .choices = {"float32", "float64"},
                .help = "scalar type of training"});
    return {.name = "toy_superposition",
            .description = "Elhage et al.'s toy model ReLU(W^T W x + b): which features sparse inputs let m dimensions hold",
            .schema = std::move(schema),
            .headlines = {{"points", {"outcome", "outcome_seeds", "optimum", "represented_median", "dims_per_feature_median", "best_loss"}}, {"geometry", {"dims_per_feature", "inverse_density", "represented", "distance_median"}}},
            .validate =
                [](const runner::Plan& plan) {
                    const auto firsts = plan.first_run_of_each_point();
                    for (const runner::Run* run : firsts)
                        if (run->integer("hidden") >= run->integer("features"))
                            throw Error("key 'hidden': " + std::to_string(run->integer("hidden")) +
                                        " is not below 'features' (" + std::to_string(run->integer("features")) +
                                        "): nothing to squeeze");
                    for (const char* key : {"features", "hidden"})
                        for (const runner::Run* run : firsts)
                            if (run->raw(key) != plan.runs.front().raw(key))
                                throw Error(std::string("key '") + key + "': one value per config (the features table has a column per hidden dimension)");
                    // The last feature's importance must be a float32 number far
                    // from overflow and underflow (1e30 and 1e-30), or the loss is.
                    for (const runner::Run* first : firsts) {
                        const runner::Run& run = *first;
                        const double digits = static_cast<double>(run.integer("features") - 1) * std::fabs(std::log10(run.number("importance_decay")));
                        if (digits > 30)
                            throw Error(fmt::format("keys 'importance_decay', 'features' ({}, {}): the last feature's importance, "
                                                    "importance_decay^(features-1), is 1e{:+.0f}, beyond the 1e-30 to 1e30 training holds",
                                                    report::number_text(run.number("importance_decay")), run.integer("features"),
                                                    std::copysign(digits, std::log10(run.number("importance_decay")))));
                    }
                    refuse_runs_beyond_memory(plan, {"features", "hidden", "batch_size", "eval_samples"}, [](const runner::Run& r) {
                        return training_bytes(r) + held_out_bytes(r);
                    });
                },
            .run = [](const runner::Run& run) { return run_toy_batch(std::span(&run, 1)).front(); },
            .run_batch = run_toy_batch,
            .aggregate = aggregate_toy,
            .plot = plot_toy,
            .validate_plot_choice =
                [](const runner::Plan&, const runner::PlotChoice& choice) {
                    if (choice.width) throw Error("--plot-width: toy_superposition draws no per-width figure; --plot-seed picks the seed");
                },
            // A sample costs its draws (n of them) and five products of
            // n x m multiply-adds each; on these tiny shapes the products'
            // share of the peak depends on n, m and the batch in no simple
            // way, so the speed is kept per shape (speed_class) and the cost
            // scales what it does predict: steps, batch and held-out samples.
            .cost = [](const runner::Run& r) {
                const double n = static_cast<double>(r.integer("features")), m = static_cast<double>(r.integer("hidden"));
                const double samples = static_cast<double>(r.integer("steps")) * static_cast<double>(r.integer("batch_size")) +
                                       static_cast<double>(r.integer("eval_samples"));
                return samples * n * (m + 3);
            },
            .speed_class =
                [](const runner::Run& r) {
                    return fmt::format("n={} m={} batch={}", r.integer("features"), r.integer("hidden"), r.integer("batch_size"));
                }};
}

}  // namespace ffn::experiments::toy_superposition
