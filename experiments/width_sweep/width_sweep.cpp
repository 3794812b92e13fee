// width_sweep: a 1-m-1 network fitted to a function of x on an interval,
// swept over widths and seeds (doc 001's sin(3x) table; claims S2, S3).
// The seeds of a width train together through train::fit_narrow, one net
// per vector lane (the general nn::MLP path gives the same to rounding, and
// tests/train/test_narrow_fit.cpp pins both); the table
// shows each width's RMSE and kink counts over seeds beside the document's
// single-run values, the S2 promise checked row by row, and the best RMSE
// any function of m + 1 linear pieces can reach on the same samples.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <span>

#include "analysis/kinks.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/stats.h"
#include "experiments/support/run.h"
#include "experiments/width_sweep/plot.h"
#include "experiments/width_sweep/target.h"
#include "experiments/width_sweep/width_sweep.h"
#include "experiments/width_sweep/live.h"
#include "io/safetensors.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "nn/weights.h"
#include "report/text.h"
#include "runner/experiment.h"
#include "train/fit.h"
#include "train/narrow_fit.h"

namespace ffn::experiments::width_sweep {

namespace {

using report::Cell;

// The target that is no formula: the config's points.
constexpr const char* kPointsTarget = "points";
using report::ColumnType;

// doc 001's init, so that kinks start inside the interval:
// w ~ N(0, 1), c ~ U(lo, hi), b = -w c (the kink sits at c); output weights
// ~ N(0, 1/m), output bias 0. Draws: (w, c) per unit in order, then the
// output weights.
template <class T>
void init_kinks_inside(nn::MLP<T>& net, Rng& rng, double lo, double hi) {
    const std::size_t m = net.layers[0].out_features();
    for (std::size_t j = 0; j < m; ++j) {
        const double w = rng.normal(), c = rng.uniform(lo, hi);
        net.layers[0].weight(j, 0) = static_cast<T>(w);
        net.layers[0].bias(j) = static_cast<T>(-w * c);
    }
    for (std::size_t j = 0; j < m; ++j) net.layers[1].weight(0, j) = static_cast<T>(rng.normal(0, 1 / std::sqrt(double(m))));
    net.layers[1].bias(0) = T(0);
}

template <class T>
nn::Matrix<T> column(const std::vector<double>& v) {
    nn::Matrix<T> M = nn::Matrix<T>::from_shape({v.size(), std::size_t{1}});
    for (std::size_t i = 0; i < v.size(); ++i) M(i, 0) = static_cast<T>(v[i]);
    return M;
}

template <class T>
void save_run(const runner::Run& run, nn::MLP<T>& net, const std::string& stage, const FitData& data) {
    std::filesystem::create_directories(run.artifacts);
    // The label finds the run; its id's first 8 digits keep two runs whose
    // labels read alike (x*x and x/x) from sharing a file.
    const std::string base = (std::filesystem::path(run.artifacts) / (run.label() + "_" + run.id_hex().substr(0, 8))).string();
    const std::map<std::string, std::string> meta = {
        {"ffn_lab_run", run.values().dump()}, {"run_id", run.id_hex()}, {"stage", stage}};
    nn::save_weights(base + "_" + stage + ".safetensors", net, meta);
    if (stage == "initial") {
        io::SafetensorsFile file;
        file.metadata = meta;
        file.tensors.push_back(io::make_tensor<double>("x", {data.x.size(), 1}, data.x.data()));
        file.tensors.push_back(io::make_tensor<double>("y", {data.y.size(), 1}, data.y.data()));
        io::write_safetensors(base + "_data.safetensors", file);
    }
}

// A run's net before training: loaded from its weights file, or
// initialised from streams keyed by what they depend on (changing lr or
// steps keeps the init).
template <class T>
nn::MLP<T> initial_net(const runner::Run& run, const FitData& data) {
    const auto m = static_cast<std::size_t>(run.integer("model.width"));
    nn::MLP<T> net({1, m, 1}, nn::parse_activation(run.string("activation")));
    if (!run.string("weights").empty()) {
        nn::load_weights(run.string("weights"), net, weight_names(run), torch_sequential_names());
        return net;
    }
    Rng init = Rng::stream(run.seed, fnv1a64(fmt::format("width={} init={}", m, run.string("init"))), "init");
    if (run.string("init") == "kinks_inside") init_kinks_inside(net, init, data.lo, data.hi);
    else nn::initialize(net, {nn::parse_init_scheme(run.string("init")), run.number("init_std")}, init);
    if (!run.artifacts.empty()) save_run(run, net, "initial", data);
    return net;
}

template <class T>
FittedNet fitted(nn::MLP<T>& net, const FitData& data) {
    FittedNet out;
    out.activation = net.activation;
    const std::size_t m = net.layers[0].out_features();
    out.w.reserve(m);
    out.b.reserve(m);
    out.v.reserve(m);
    for (std::size_t j = 0; j < m; ++j) {
        out.w.push_back(static_cast<double>(net.layers[0].weight(j, 0)));
        out.b.push_back(static_cast<double>(net.layers[0].bias(j)));
        out.v.push_back(static_cast<double>(net.layers[1].weight(0, j)));
    }
    out.c = static_cast<double>(net.layers[1].bias(0));
    const nn::Matrix<T> pred = net.forward_with_hook(column<T>(data.x));
    double sse = 0;
    for (std::size_t i = 0; i < data.x.size(); ++i) {
        const double e = static_cast<double>(pred(i, 0)) - data.y[i];
        sse += e * e;
    }
    out.rmse = std::sqrt(sse / static_cast<double>(data.x.size()));
    return out;
}

// Runs that differ only in their seed share the data and the shape, so
// their nets train together, one per vector lane (train::fit_narrow): each
// gets the bits it would get alone.
template <class T>
std::vector<FittedNet> fit_together(std::span<const runner::Run> runs, const FitData& data) {
    std::vector<nn::MLP<T>> nets;
    nets.reserve(runs.size());  // an MLP is copied, not moved, when the vector grows
    for (const auto& run : runs) nets.push_back(initial_net<T>(run, data));
    std::vector<nn::MLP<T>*> trained;
    for (std::size_t i = 0; i < runs.size(); ++i)
        if (runs[i].string("weights").empty()) trained.push_back(&nets[i]);
    const runner::Run& first = runs.front();
    train::FitSpec spec;
    spec.steps = first.integer("steps");
    spec.record_every = first.integer("log_every") > 0 ? first.integer("log_every") : spec.steps;
    const std::vector<T> x(data.x.begin(), data.x.end()), y(data.y.begin(), data.y.end());
    const auto records = train::fit_narrow<T>(trained, {train::parse_optimizer(first.string("optimizer")), first.number("lr")}, x, y, spec);
    std::vector<FittedNet> out;
    for (std::size_t i = 0, k = 0; i < runs.size(); ++i) {
        const bool loaded = !runs[i].string("weights").empty();
        if (!loaded && !runs[i].artifacts.empty()) save_run(runs[i], nets[i], "final", data);
        FittedNet f = fitted(nets[i], data);
        f.status = loaded ? "loaded" : records[k].status;
        f.steps = loaded ? 0 : records[k].steps_done;
        if (!loaded && first.integer("log_every") > 0) f.curve = records[k].curve;
        k += loaded ? 0 : 1;
        out.push_back(std::move(f));
    }
    return out;
}

// Slope changes of the trained function on a dense grid, evaluated in
// float64 from the weights, as a cross-check of the weight count.
int grid_kinks(const FittedNet& f, double lo, double hi, std::size_t points) {
    const double dx = (hi - lo) / static_cast<double>(points - 1);
    double scale = 0;
    for (std::size_t j = 0; j < f.w.size(); ++j) scale = std::max(scale, std::fabs(f.w[j] * f.v[j]));
    // A kink changes the slope by |w_j v_j|; rounding in y moves slopes by
    // about eps * |y| / dx. The threshold sits far above the second and
    // far below any kink that visibly bends the function.
    const double tolerance = std::max(1e-7 * scale, 1e-9);
    // A ReLU net: the analysis layer reads the grid near its kinks alone,
    // with the same count. Another: every point, a unit at a time through
    // the activation layer, in the thread's buffers (fresh 320 KB arrays
    // were a page fault per 4 KB).
    if (f.activation == nn::Activation::relu)
        return analysis::relu_net_slope_changes(f.w, f.b, f.v, f.c, lo, dx, points, tolerance);
    thread_local std::vector<double> y, h;
    y.assign(points, f.c);
    h.resize(points);
    for (std::size_t j = 0; j < f.w.size(); ++j) {
        for (std::size_t k = 0; k < points; ++k) h[k] = f.w[j] * (lo + dx * static_cast<double>(k)) + f.b[j];
        nn::activate_inplace(f.activation, std::span(h));
        for (std::size_t k = 0; k < points; ++k) y[k] += f.v[j] * h[k];
    }
    return analysis::slope_changes(y, dx, tolerance);
}

// A run's table starts as a copy of this one, so that every run's shares
// its column list instead of building one (a few allocations a run, in
// sweeps of a million).
const report::Table& empty_run_table() {
    static const report::Table t = [] {
        report::Table empty("run");
        empty.add_column("rmse", ColumnType::real, 4)
            .add_column("kinks", ColumnType::integer)
            .add_column("kinks_grid", ColumnType::integer)
            .add_column("steps_done", ColumnType::integer)
            .add_column("status", ColumnType::text);
        return empty;
    }();
    return t;
}

std::vector<report::Table> run_table(const runner::Run& run, const FitData& data, const FittedNet& f) {
    std::vector<report::Table> out;
    report::Table& t = out.emplace_back(empty_run_table());
    const bool ok = std::isfinite(f.rmse);
    // A smooth activation has no kinks to count, and a diverged net's
    // weights are no function: n/a (null), not 0.
    Cell kinks{}, kinks_grid{};
    if (ok && nn::is_piecewise_linear(f.activation)) {
        kinks = static_cast<std::int64_t>(analysis::kinks_inside(f.w, f.b, data.lo, data.hi));
        kinks_grid = static_cast<std::int64_t>(grid_kinks(f, data.lo, data.hi, static_cast<std::size_t>(run.integer("grid_points"))));
    }
    t.add_row({ok ? Cell{f.rmse} : Cell{}, kinks, kinks_grid, static_cast<std::int64_t>(f.steps), f.status});
    if (run.integer("log_every") == 0) return out;
    report::Table& curve = out.emplace_back("curve");
    curve.add_column("step", ColumnType::integer).add_column("loss", ColumnType::real, 6);
    for (const auto& [step, loss] : f.curve)
        curve.add_row({static_cast<std::int64_t>(step), std::isfinite(loss) ? Cell{loss} : Cell{}});
    return out;
}

std::vector<std::vector<report::Table>> run_width_batch(std::span<const runner::Run> runs) {
    const FitData data = make_fit_data(runs.front());
    const std::vector<FittedNet> nets = fit_width_runs(runs, data);
    std::vector<std::vector<report::Table>> out;
    for (std::size_t i = 0; i < runs.size(); ++i) out.push_back(run_table(runs[i], data, nets[i]));
    return out;
}

// The document's printed values for a width, when it prints any.
struct Printed {
    Cell rmse, kinks;
};

Printed printed_for(const runner::Run& run, std::int64_t m) {
    const auto& doc = run.raw("document");
    Printed p;
    const std::string key = std::to_string(m);
    for (const char* field : {"rmse", "kinks"}) {
        if (!doc.contains(field)) continue;
        const auto& table = doc[field];
        if (!table.is_object()) throw Error(std::string("key 'document.") + field + "': expected {width: value}");
        if (!table.contains(key)) continue;
        if (!table[key].is_number()) throw Error(std::string("key 'document.") + field + "': value for width " + key + " is not a number");
        (std::string(field) == "rmse" ? p.rmse : p.kinks) = table[key].get<double>();
    }
    return p;
}

// What the runs of one set of seeds left: RMSE of those that did not
// diverge, and every run's kinks.
struct SeedResults {
    std::vector<double> rmse, kinks, grid;
    std::size_t diverged = 0;
};

SeedResults collect(const runner::Aggregation& a, std::span<const std::size_t> runs) {
    SeedResults out;
    for (std::size_t i : runs) {
        if (const auto x = report::as_number(a.run_cell(i, "rmse"))) out.rmse.push_back(*x);
        else ++out.diverged;
        if (const auto k = report::as_number(a.run_cell(i, "kinks"))) out.kinks.push_back(*k);
        if (const auto g = report::as_number(a.run_cell(i, "kinks_grid"))) out.grid.push_back(*g);
    }
    return out;
}

// The S2 promise (experiments/README.md) over one set of seeds of one width, each part
// its own cell (null where the document prints no RMSE or nothing came
// before to fall from).
struct Promise {
    Cell kinks_le_m, median_kinks_ge_m3, a_seed_within_25, median_within_2_5, rmse_falls;
    double rmse_median = std::numeric_limits<double>::quiet_NaN();
    bool pass = false;
};

constexpr double kFallMargin = 0.01;

Promise judge(std::int64_t m, const SeedResults& seeds, const Cell& doc_rmse, double previous_median) {
    const std::vector<double>&rmse = seeds.rmse, &kinks = seeds.kinks;
    Promise p;
    if (!kinks.empty()) {
        p.kinks_le_m = *std::max_element(kinks.begin(), kinks.end()) <= double(m);
        p.median_kinks_ge_m3 = median(kinks) >= double(m - 3);
    }
    if (!rmse.empty()) p.rmse_median = median(rmse);
    if (const auto d = report::as_number(doc_rmse); d && !rmse.empty()) {
        p.a_seed_within_25 = std::any_of(rmse.begin(), rmse.end(), [&](double r) { return std::fabs(r - *d) <= 0.25 * *d; });
        p.median_within_2_5 = p.rmse_median <= 2.5 * *d && p.rmse_median >= *d / 2.5;
    }
    // A fall is a drop of at least kFallMargin: a median that moves in its
    // fourth digit (a plateau) has not fallen, though '<' would say so.
    if (!rmse.empty() && std::isfinite(previous_median)) p.rmse_falls = p.rmse_median < (1 - kFallMargin) * previous_median;
    p.pass = seeds.diverged == 0;
    for (const Cell* c : {&p.kinks_le_m, &p.median_kinks_ge_m3, &p.a_seed_within_25, &p.median_within_2_5, &p.rmse_falls})
        if (const bool* b = std::get_if<bool>(c)) p.pass = p.pass && *b;
    return p;
}

constexpr std::size_t kPwlBoundSamples = 4000;

// Seeds in blocks of ten, the size of S2 protocol, when a config runs a
// multiple of ten with at least two blocks: how many blocks would pass the
// promise on their own says how much one ten-seed verdict can be trusted.
constexpr std::size_t kBlock = 10;

// Where the seeds of a width split, if they do: the widest gap (as a ratio)
// between neighbouring RMSEs with at least a tenth of the seeds on each
// side, and the share of seeds below it. At m = 4 the seeds fall into two
// basins and the median sits in the gap between them, so another seed set
// moves it from one basin to the other.
struct Split {
    Cell ratio{}, share_below{};
};

Split widest_central_gap(std::vector<double> rmse) {
    const std::size_t n = rmse.size();
    if (n < 5) return {};
    std::sort(rmse.begin(), rmse.end());
    const std::size_t margin = std::max<std::size_t>(1, n / 10);
    double best = 0;
    std::size_t below = 0;
    for (std::size_t k = margin; k + margin <= n; ++k)
        if (rmse[k - 1] > 0 && rmse[k] / rmse[k - 1] > best) best = rmse[k] / rmse[k - 1], below = k;
    if (below == 0) return {};
    return {best, static_cast<double>(below) / static_cast<double>(n)};
}

// One width's seeds, judged or measured against the document.
struct WidthRow {
    std::size_t first = 0, seeds = 0;
    std::int64_t m = 0;
    SeedResults all;
    Printed printed;    // the document's values for m, whatever the protocol
    bool doc_protocol;  // the run's settings are the document's (its seeds aside)
    bool judged;        // ... and its seeds too
    Promise whole;
    double narrower_median = std::numeric_limits<double>::quiet_NaN();
    Cell blocks{}, blocks_pass{};
};

std::vector<WidthRow> width_rows(const runner::Aggregation& a) {
    const runner::Plan& plan = a.plan;
    const auto groups = a.seed_groups();
    std::vector<WidthRow> rows;
    std::vector<std::string> keys;
    for (const auto& group : groups) {
        WidthRow w;
        w.first = group.front();
        w.seeds = group.size();
        const runner::Run& first = plan.runs[w.first];
        w.m = first.integer("model.width");
        w.all = collect(a, group);
        w.printed = printed_for(first, w.m);
        w.doc_protocol = plan.follows_protocol(first, {"seeds"});
        w.judged = plan.follows_protocol(first);
        keys.push_back(a.settings_key(w.first, {"model.width"}));
        rows.push_back(std::move(w));
    }
    // Each row against the same settings one width narrower: the widest
    // width below its own, wherever the sweep lists it.
    const auto narrower = [&](std::size_t r) -> std::optional<std::size_t> {
        std::optional<std::size_t> best;
        for (std::size_t o = 0; o < rows.size(); ++o)
            if (keys[o] == keys[r] && rows[o].m < rows[r].m && !rows[o].all.rmse.empty() && (!best || rows[o].m > rows[*best].m))
                best = o;
        return best;
    };
    const auto block_of = [&](std::size_t r, std::size_t b) {
        return collect(a, std::span(groups[r]).subspan(b * kBlock, kBlock));
    };
    for (std::size_t r = 0; r < rows.size(); ++r) {
        WidthRow& w = rows[r];
        const auto below = narrower(r);
        if (below) w.narrower_median = median(rows[*below].all.rmse);
        w.whole = judge(w.m, w.all, w.printed.rmse, w.narrower_median);
        if (w.seeds < 2 * kBlock || w.seeds % kBlock != 0 || report::is_null(w.printed.rmse)) continue;
        std::int64_t passing = 0;
        for (std::size_t b = 0; b < w.seeds / kBlock; ++b) {
            double before = std::numeric_limits<double>::quiet_NaN();
            if (below && rows[*below].seeds == w.seeds)
                if (const SeedResults narrow = block_of(*below, b); !narrow.rmse.empty()) before = median(narrow.rmse);
            passing += judge(w.m, block_of(r, b), w.printed.rmse, before).pass ? 1 : 0;
        }
        w.blocks = static_cast<std::int64_t>(w.seeds / kBlock);
        w.blocks_pass = passing;
    }
    return rows;
}

Cell min_of(const std::vector<double>& v) { return v.empty() ? Cell{} : Cell{*std::min_element(v.begin(), v.end())}; }
Cell max_of(const std::vector<double>& v) { return v.empty() ? Cell{} : Cell{*std::max_element(v.begin(), v.end())}; }

report::Table width_table(const runner::Aggregation& a, const std::vector<WidthRow>& rows) {
    const runner::Plan& plan = a.plan;
    report::Table t("width");
    a.add_swept_columns(t);
    const bool width_swept = t.find_column("model.width").has_value();
    if (!width_swept) t.add_column("model.width", ColumnType::integer);
    // The document's columns, the S2 promise and its verdict exist only where
    // the config gives the document's values (configs/activations.json gives
    // none: no printed value, nothing to judge).
    const bool has_document = !plan.runs.front().raw("document").empty();
    using Columns = std::vector<std::tuple<const char*, ColumnType, int>>;
    for (auto [name, type, digits] : Columns{
             {"seeds", ColumnType::integer, 0},
             {"rmse_median", ColumnType::real, 4},    {"rmse_min", ColumnType::real, 4},
             {"rmse_max", ColumnType::real, 4},       {"rmse_median_ci95_lo", ColumnType::real, 4},
             {"rmse_median_ci95_hi", ColumnType::real, 4}, {"widest_gap_ratio", ColumnType::real, 3},
             {"share_below_gap", ColumnType::real, 2}, {"rmse_doc", ColumnType::real, 4},
             {"pwl_bound_rmse", ColumnType::real, 4}, {"kinks_median", ColumnType::real, 3},
             {"kinks_min", ColumnType::integer, 0},   {"kinks_max", ColumnType::integer, 0},
             {"kinks_doc", ColumnType::integer, 0},   {"kinks_grid_median", ColumnType::real, 3},
             {"max_pieces", ColumnType::integer, 0},  {"diverged", ColumnType::integer, 0}})
        if (has_document || !std::string_view(name).ends_with("_doc")) t.add_column(name, type, digits);
    if (has_document)
        for (auto [name, type, digits] : Columns{
                 {"kinks_le_m", ColumnType::boolean, 0},    {"median_kinks_ge_m_minus_3", ColumnType::boolean, 0},
                 {"a_seed_within_25pct", ColumnType::boolean, 0}, {"median_within_2_5x", ColumnType::boolean, 0},
                 {"rmse_falls", ColumnType::boolean, 0},  {"verdict", ColumnType::text, 0},
                 {"ten_seed_blocks", ColumnType::integer, 0}, {"ten_seed_blocks_pass", ColumnType::integer, 0}})
            t.add_column(name, type, digits);

    for (const WidthRow& w : rows) {
        const runner::Run& first = plan.runs[w.first];
        const std::vector<double>&rmse = w.all.rmse, &kinks = w.all.kinks, &grid = w.all.grid;
        const FitData data = make_fit_data(first);
        // The exact bound tabulates n^2 / 2 segment errors: past kPwlBoundSamples
        // points (64 MiB, about a second) the column is left empty. It bounds
        // ReLU nets only (m + 1 pieces); other activations read n/a.
        const bool relu = first.string("activation") == "relu";
        const Cell bound = relu && data.x.size() <= kPwlBoundSamples
                               ? Cell{analysis::piecewise_linear_lower_bound(data.x, data.y, static_cast<int>(w.m) + 1)}
                               : Cell{};
        // The document's values belong to its protocol (the config's
        // "protocol" block): a row under any other target, interval,
        // training... shows none and is not judged. Under the protocol but on
        // other seeds than it fixes (S2: 0-99), they are shown, but the
        // verdict needs those seeds.
        const Printed doc = w.doc_protocol ? w.printed : Printed{};
        auto cells = a.swept_cells(w.first);
        if (!width_swept) cells.push_back(w.m);
        // Kink statistics for piecewise-linear nets; n/a (null) for smooth ones.
        Cell kinks_median{}, grid_median{}, max_pieces{};
        if (!kinks.empty()) {
            kinks_median = median(kinks);
            grid_median = median(grid);
            max_pieces = static_cast<std::int64_t>(*std::max_element(kinks.begin(), kinks.end())) + 1;
        }
        Cell med{}, ci_lo{}, ci_hi{};
        if (!rmse.empty()) {
            med = median(rmse);
            // Its own stream, named by the group's resolved values: the same
            // runs give the same interval in whatever sweep they sit.
            Rng rng = Rng::stream(0, fnv1a64(a.settings_key(w.first, {}, /*resolved=*/true)), "bootstrap");
            const Interval ci = bootstrap_median_interval(rmse, rng);
            ci_lo = ci.lo;
            ci_hi = ci.hi;
        }
        const Split split = widest_central_gap(rmse);
        const auto as_int = [](const Cell& c) { return report::is_null(c) ? c : Cell{static_cast<std::int64_t>(*report::as_number(c))}; };
        std::string verdict;
        if (report::is_null(w.printed.rmse)) verdict = "";
        else if (!w.doc_protocol) verdict = "n/a";
        else if (!w.judged) verdict = fmt::format("n/a ({})", report::counted(w.seeds, "seed"));
        else verdict = w.whole.pass ? "pass" : "miss";
        const Cell seeds = static_cast<std::int64_t>(w.seeds), diverged = static_cast<std::int64_t>(w.all.diverged);
        const Cell kmin = as_int(min_of(kinks)), kmax = as_int(max_of(kinks));
        if (has_document)
            cells.insert(cells.end(), {seeds, med, min_of(rmse), max_of(rmse), ci_lo, ci_hi, split.ratio, split.share_below,
                                       doc.rmse, bound, kinks_median, kmin, kmax, as_int(doc.kinks), grid_median, max_pieces,
                                       diverged});
        else
            cells.insert(cells.end(), {seeds, med, min_of(rmse), max_of(rmse), ci_lo, ci_hi, split.ratio, split.share_below,
                                       bound, kinks_median, kmin, kmax, grid_median, max_pieces, diverged});
        // The promise's parts are judgements against the document: shown
        // only where its protocol holds.
        if (has_document) {
            const Promise p = w.doc_protocol ? w.whole : Promise{};
            cells.insert(cells.end(), {p.kinks_le_m, p.median_kinks_ge_m3, p.a_seed_within_25, p.median_within_2_5,
                                       p.rmse_falls, verdict, w.doc_protocol ? w.blocks : Cell{},
                                       w.doc_protocol ? w.blocks_pass : Cell{}});
        }
        t.add_row(std::move(cells));
    }
    a.set_summary_after_swept(t,
                                    {{"model.width", "m"}, {"seeds", ""}, {"verdict", ""}, {"rmse_median", "RMSE median [min, max]"},
                                     {"rmse_doc", "doc RMSE"}, {"pwl_bound_rmse", "PL bound"},
                                     {"kinks_median", "kinks [min, max]"}, {"kinks_doc", "doc kinks"}});
    return t;
}

// The S2 promise's parts as numbers, for every row the document prints a
// value for, under its protocol or not: how the promise fares when the
// protocol changes (configs/width_neighbours.json). No verdict: the rows
// off the protocol are other experiments, measured against the printed
// numbers only to show how much the choice of protocol decides.
report::Table promise_table(const runner::Aggregation& a, const std::vector<WidthRow>& rows) {
    const runner::Plan& plan = a.plan;
    report::Table t("promise");
    a.add_swept_columns(t);
    const bool width_swept = t.find_column("model.width").has_value();
    if (!width_swept) t.add_column("model.width", ColumnType::integer);
    t.add_column("protocol", ColumnType::text)
        .add_column("seeds", ColumnType::integer)
        .add_column("kinks_max_minus_m", ColumnType::integer)
        .add_column("kinks_median_minus_m", ColumnType::real, 3)
        .add_column("best_seed_gap", ColumnType::real, 3)
        .add_column("median_over_doc", ColumnType::real, 3)
        .add_column("median_over_narrower", ColumnType::real, 5)  // a plateau reads 0.99998, not 1
        .add_column("parts_missed", ColumnType::text);
    for (const WidthRow& w : rows) {
        const auto d = report::as_number(w.printed.rmse);
        if (!d) continue;
        auto cells = a.swept_cells(w.first);
        if (!width_swept) cells.push_back(w.m);
        const std::vector<double>&rmse = w.all.rmse, &kinks = w.all.kinks;
        std::string off;
        for (const auto& key : plan.protocol_deviations_of(plan.runs[w.first], {"seeds"})) off += (off.empty() ? "" : ", ") + key;
        Cell kmax{}, kmed{}, gap{}, ratio{}, falls{};
        if (!kinks.empty()) {
            kmax = static_cast<std::int64_t>(*std::max_element(kinks.begin(), kinks.end())) - w.m;
            kmed = median(kinks) - static_cast<double>(w.m);
        }
        if (!rmse.empty()) {
            double best = std::numeric_limits<double>::infinity();
            for (double r : rmse) best = std::min(best, std::fabs(r - *d) / *d);
            gap = best;
            ratio = w.whole.rmse_median / *d;
            if (std::isfinite(w.narrower_median)) falls = w.whole.rmse_median / w.narrower_median;
        }
        std::string missed;
        const std::vector<std::pair<const char*, const Cell*>> parts = {
            {"kinks_le_m", &w.whole.kinks_le_m},       {"median_kinks_ge_m_minus_3", &w.whole.median_kinks_ge_m3},
            {"a_seed_within_25pct", &w.whole.a_seed_within_25}, {"median_within_2_5x", &w.whole.median_within_2_5},
            {"rmse_falls", &w.whole.rmse_falls}};
        for (const auto& [name, cell] : parts)
            if (const bool* b = std::get_if<bool>(cell); b && !*b) missed += (missed.empty() ? "" : ", ") + std::string(name);
        if (w.all.diverged) missed += (missed.empty() ? "" : ", ") + fmt::format("{} diverged", w.all.diverged);
        cells.insert(cells.end(), {off.empty() ? std::string("doc 001's") : "differs: " + off,
                                   static_cast<std::int64_t>(w.seeds), kmax, kmed, gap, ratio, falls,
                                   missed.empty() ? std::string("none") : missed});
        t.add_row(std::move(cells));
    }
    a.set_summary_after_swept(t, {{"model.width", "m"}, {"protocol", ""}, {"parts_missed", ""}});
    return t;
}

std::vector<report::Table> aggregate_width(runner::Aggregation& a) {
    const runner::Plan& plan = a.plan;
    const std::vector<WidthRow> rows = width_rows(a);
    std::vector<report::Table> out = {width_table(a, rows)};
    if (!plan.runs.front().raw("document").empty()) out.push_back(promise_table(a, rows));
    out.push_back(a.take_per_run_rows());  // the last read of the runs' rows
    if (plan.runs.front().integer("log_every") == 0) return out;
    // The training curves, one row per (run, logged step), for files and plots.
    report::Table curves("curves");
    curves.set_long_form();
    a.add_swept_columns(curves);
    curves.add_column("seed", ColumnType::integer).add_column("run_id", ColumnType::text);
    curves.add_column("step", ColumnType::integer).add_column("loss", ColumnType::real, 6);
    curves.add_key("seed");
    curves.add_key("step");
    for (std::size_t i = 0; i < plan.runs.size(); ++i) {
        const report::Table* logged = a.run_table(i, "curve");
        if (!logged) continue;  // a loaded net trains no steps
        const report::Table& c = *logged;
        for (std::size_t r = 0; r < c.row_count(); ++r) {
            auto cells = a.swept_cells(i);
            cells.insert(cells.end(), {static_cast<std::int64_t>(plan.runs[i].seed), plan.runs[i].id_hex(), c.at(r, "step"), c.at(r, "loss")});
            curves.add_row(std::move(cells));
        }
    }
    out.push_back(std::move(curves));
    return out;
}

template <class T>
FittedNet fit_watched_as(const runner::Run& run, const FitData& data, const Watch& watch) {
    nn::MLP<T> net = initial_net<T>(run, data);
    train::FitSpec spec;
    spec.steps = run.integer("steps");
    spec.record_every = spec.steps;
    const std::vector<T> x(data.x.begin(), data.x.end()), y(data.y.begin(), data.y.end());
    nn::MLP<T>* nets[] = {&net};
    if (!watch(0, std::nan(""), [&] { return fitted(net, data); })) {  // the initial net, before any step
        FittedNet f = fitted(net, data);
        f.status = "stopped";
        return f;
    }
    const auto records = train::fit_narrow<T>(
        nets, {train::parse_optimizer(run.string("optimizer")), run.number("lr")}, x, y, spec,
        [&](long step, std::span<const double> losses) { return watch(step, losses[0], [&] { return fitted(net, data); }); });
    FittedNet f = fitted(net, data);
    f.status = records[0].status;
    f.steps = records[0].steps_done;
    return f;
}

}  // namespace

FittedNet fit_watched(const runner::Run& run, const FitData& data, const Watch& watch) {
    if (!run.string("weights").empty()) throw Error("key 'weights': a watched run trains from its init");
    return run.is_float64() ? fit_watched_as<double>(run, data, watch) : fit_watched_as<float>(run, data, watch);
}

FitData make_fit_data(const runner::Run& run) {
    const auto interval = run.numbers("interval");
    if (interval.size() != 2 || !(interval[0] < interval[1]))
        throw Error("key 'interval': expected [lo, hi] with lo < hi");
    // Past that the samples' spacing is not a number, and the message would
    // name a sample at x = nan.
    if (!std::isfinite(interval[1] - interval[0]))
        throw Error(fmt::format("key 'interval': [{}, {}] is wider than a double can hold (hi - lo overflows)", interval[0], interval[1]));
    FitData d;
    d.lo = interval[0];
    d.hi = interval[1];
    const auto n = static_cast<std::size_t>(run.integer("samples"));
    const auto points = run.matrix("points");
    if (run.string("target") == kPointsTarget || !points.empty()) {
        // Every key keeps its meaning: the points lie in the interval, and
        // samples counts them, so that a config says what it fits.
        if (run.string("target") != kPointsTarget)
            throw Error("key 'points': given with target '" + run.string("target") + "'; target \"points\" fits them");
        if (points.empty()) throw Error("key 'points': target \"points\" needs them, [[x, y], ...]");
        if (points.front().size() != 2) throw Error("key 'points': expected rows of two numbers, [x, y]");
        if (points.size() != n)
            throw Error(fmt::format("key 'samples': {} with {} points; with target \"points\", samples is their count", n, points.size()));
        for (std::size_t i = 0; i < points.size(); ++i) {
            const double x = points[i][0], y = points[i][1];
            const auto where = [&] { return fmt::format("key 'points': row {} ([{}, {}])", i + 1, x, y); };
            if (!std::isfinite(x) || !std::isfinite(y)) throw Error(where() + ": not a finite number");
            if (x < d.lo || x > d.hi) throw Error(fmt::format("{}: x outside the interval [{}, {}]", where(), d.lo, d.hi));
            if (i > 0 && x < d.x.back()) throw Error(fmt::format("{}: x below the row before ({}); list the points by x", where(), d.x.back()));
            // Two y at one x are not a function: the PWL bound (which
            // assumes one) would read 0 where no fit can reach it.
            if (i > 0 && x == d.x.back())
                throw Error(fmt::format("{}: the same x as the row before; each x once (average repeated measurements first)", where()));
            d.x.push_back(x);
            d.y.push_back(y);
        }
        return d;
    }
    TargetFunction f(run.string("target"), "target");
    for (std::size_t i = 0; i < n; ++i) {
        const double x = d.lo + (d.hi - d.lo) * static_cast<double>(i) / static_cast<double>(n - 1);
        d.x.push_back(x);
        d.y.push_back(f(x));
    }
    return d;
}

namespace {
// Each point's data once, before any run: a bad target, interval or
// points list is named before the work, and not as a run's failure.
void validate_data(const runner::Plan& plan) {
    for (const runner::Run* run : plan.first_run_of_each_point()) make_fit_data(*run);
}

// A piecewise-linear net's kinks counted on grid_points points, net by
// net: 1.8 (m + 8) units of cost a point, measured against a ReLU unit's
// training step (steps=0, m = 16 and 256, 1 and 16 seeds of 10^7 points,
// one thread). A process's first grid costs about 0.45 s more per 10^7
// points besides, once, which no run's cost can carry.
double kink_grid_cost(const runner::Run& r) {
    if (!nn::is_piecewise_linear(nn::parse_activation(r.string("activation")))) return 0.0;
    return 1.8 * static_cast<double>(r.integer("grid_points")) * (static_cast<double>(r.integer("model.width")) + 8.0);
}
}  // namespace

std::function<double(double)> target_curve(const runner::Run& run, const FitData& data) {
    if (run.string("target") == kPointsTarget)
        return [x = data.x, y = data.y](double at) {
            const auto above = std::upper_bound(x.begin(), x.end(), at);
            if (above == x.end()) return at == x.back() ? y.back() : std::nan("");
            if (above == x.begin()) return std::nan("");
            const auto i = static_cast<std::size_t>(above - x.begin());
            return y[i - 1] + (y[i] - y[i - 1]) * (at - x[i - 1]) / (x[i] - x[i - 1]);
        };
    auto f = std::make_shared<TargetFunction>(run.string("target"), "target");
    return [f](double at) {
        try {
            return (*f)(at);
        } catch (const Error&) {
            return std::nan("");  // no value there (1/x at 0): the samples decide what trains
        }
    };
}

double FittedNet::unit(std::size_t j, double x) const { return v[j] * nn::activate(activation, w[j] * x + b[j]); }

double FittedNet::at(double x) const {
    double y = c;
    for (std::size_t j = 0; j < w.size(); ++j) y += unit(j, x);
    return y;
}

std::vector<FittedNet> fit_width_runs(std::span<const runner::Run> runs, const FitData& data) {
    return runs.front().is_float64() ? fit_together<double>(runs, data) : fit_together<float>(runs, data);
}

runner::ExperimentKind make() {
    using runner::Json;
    using runner::KeyType;
    std::vector<std::string> inits = nn::init_scheme_names();
    inits.insert(inits.begin(), "kinks_inside");
    runner::Schema schema{
        {.path = "target", .type = KeyType::string, .default_value = "sin(3*x)",
         .help = "an expression in x, read by muparser (abs(x), x^2, exp(-x^2) ...), or \"points\" (below)"},
        {.path = "points", .type = KeyType::matrix, .default_value = Json::array(),
         .help = "[[x, y], ...] to fit with target \"points\": x strictly increasing, inside interval, samples their count",
         .id_omits_default = true},
        {.path = "interval", .type = KeyType::number_list, .default_value = Json::parse("[-2, 2]"),
         .help = "[lo, hi] of the training points"},
        {.path = "samples", .type = KeyType::integer, .default_value = 400, .min = 2.0, .max = 1e6,
         .help = "evenly spaced training points, ends included"},
        {.path = "model.width", .type = KeyType::integer, .default_value = 8, .min = 1.0, .max = 1e5,
         .help = "hidden units m (sweep it)"},
        {.path = "activation", .type = KeyType::string, .default_value = "relu", .choices = nn::activation_names(),
         .help = "the hidden units' activation; kinks are counted for relu and identity, n/a for the smooth ones"},
        {.path = "init", .type = KeyType::string, .default_value = "kinks_inside", .choices = inits,
         .help = "initialisation of the net"},
        {.path = "init_std", .type = KeyType::number, .default_value = 0.02, .min = 0.0, .help = "std of init=normal"},
        {.path = "optimizer", .type = KeyType::string, .default_value = "adam", .choices = {"sgd", "adam", "adamw"},
         .help = "PyTorch's update formulas"},
        {.path = "lr", .type = KeyType::number, .default_value = 1e-3, .min = 0.0, .help = "learning rate"},
        {.path = "steps", .type = KeyType::integer, .default_value = 5000, .min = 0.0, .max = 1e8,
         .help = "full-batch steps"},
        {.path = "log_every", .type = KeyType::integer, .default_value = 0, .min = 0.0, .max = 1e8,
         .help = "record each run's training MSE every N steps (0: off): a curves table, and curves.svg with --plot"},
        {.path = "grid_points", .type = KeyType::integer, .default_value = 40001, .min = 3.0, .max = 1e7,
         .help = "dense grid for the slope-change kink count"},
        {.path = "dtype", .type = KeyType::string, .default_value = "float32", .choices = {"float32", "float64"},
         .help = "scalar type of training"},
        {.path = "document", .type = KeyType::object, .default_value = Json::object(),
         .help = "the printed values, {\"rmse\": {m: value}, \"kinks\": {m: value}}, judged only under the config's protocol"},
    };
    add_weight_keys(schema);
    return {.name = "width_sweep",
            .description = "1-m-1 fits of a function over widths, activations and seeds: RMSE, kinks, the S2 promise",
            .schema = std::move(schema),
            // The width table has a summary of its own for the terminal;
            // this names its headline for `ffn-lab results`.
            .headlines = {{"width", {"rmse_median", "kinks_median"}}},
            // A loaded net's width (and, in ffn-lab's own files, its
            // activation) is the file's: no --set model.width to type. It
            // is analysed as it is: a config that asks for steps is told,
            // rather than its steps left unused (and naming the run).
            .keys_from_files =
                [](runner::GridPoint& point, const std::set<std::string>& given) {
                    const std::string weights = point.values.value("weights", "");
                    if (weights.empty()) return;
                    if (given.contains("steps") && point.values.value("steps", 0) != 0)
                        throw Error(fmt::format("key 'steps': {} is analysed as it is, not trained; set no steps (--set steps=0)", weights));
                    point.values["steps"] = 0;
                    if (const auto facts = weights_facts(weights, point.values.value("names", Json::object())))
                        take_weights_file_keys(point, given, weights, *facts, {{"model.width", facts->hidden}},
                                               fmt::format("a 1-{}-1 net", facts->hidden));
                },
            .validate =
                [](const runner::Plan& plan) {
                    if (!plan.runs.front().raw("document").empty() && !plan.config.contains("protocol"))
                        throw Error("key 'document': the printed values need a 'protocol' block naming the settings they hold for");
                    // Forward and backward keep about six samples x width
                    // matrices per run; train::fit_narrow keeps two more per
                    // lane of its widest block for smooth units (a block of
                    // one run keeps them all), counted so on every CPU: the
                    // same config is refused or run everywhere.
                    refuse_runs_beyond_memory(plan, {"samples", "model.width"}, [](const runner::Run& r) {
                        const bool smooth = !nn::is_piecewise_linear(nn::parse_activation(r.string("activation")));
                        const double matrices = 6.0 + (smooth ? 2.0 * train::kNarrowMaxLanes : 0.0);
                        return matrices * static_cast<double>(r.integer("samples")) * static_cast<double>(r.integer("model.width")) *
                               (r.is_float64() ? 8 : 4);
                    });
                    const auto loads = [](const runner::Run* r) { return !r->string("weights").empty(); };
                    const auto firsts = plan.first_run_of_each_point();
                    if (plan.seeds.size() > 1 && std::any_of(firsts.begin(), firsts.end(), loads))
                        throw Error("key 'weights': a loaded model is the same for every seed; give one seed (--set seeds=[0])");
                    validate_data(plan);
                },
            .run = [](const runner::Run& run) { return run_width_batch(std::span(&run, 1)).front(); },
            .run_batch = run_width_batch,
            .batch_runs = train::kNarrowMaxLanes,  // one block of the widest narrow kernel
            .aggregate = aggregate_width,
            .one_row_runs = true,
            .saves_weights = true,
            .plot = plot_width_sweep,
            .validate_plot_choice =
                [](const runner::Plan& plan, const runner::PlotChoice& choice) {
                    if (choice.width && std::none_of(plan.runs.begin(), plan.runs.end(), [&](const runner::Run& r) {
                            return r.integer("model.width") == *choice.width;
                        }))
                        throw Error(fmt::format("--plot-width {}: no run of the sweep has that model.width", *choice.width));
                },
            // Steps x samples x (units + 1), a unit of a smooth activation
            // costing what its formula costs against a ReLU's: measured with
            // 64 seeds x 5000 steps at m = 4 and 32 on one thread (AVX-512),
            // tanh 5.8, SiLU 6.7, GELU 11.2 times a ReLU unit. Then the
            // evaluation, a step's worth, and a piecewise-linear net's kink
            // count (kink_grid_cost), which a sweep with a dense grid and few
            // steps is mostly. bench estimate holds the sweep estimates this
            // feeds to the wall time.
            .cost = [](const runner::Run& r) {
                const auto activation = nn::parse_activation(r.string("activation"));
                const double m = static_cast<double>(r.integer("model.width"));
                double per_unit = 1.0;
                if (!nn::is_piecewise_linear(activation)) {
                    const std::string name(nn::to_string(activation));
                    per_unit = name == "gelu" ? 11.0 : name == "silu" || name == "gelu_tanh" ? 7.0 : 6.0;
                }
                return (static_cast<double>(r.integer("steps")) + 1.0) * static_cast<double>(r.integer("samples")) *
                           (per_unit * m + 1.0) + kink_grid_cost(r);
            },
            // A block of the narrow kernel trains its lanes' worth of seeds
            // whether or not each lane holds one; the kinks are counted net by net.
            .cost_lanes = [] { return train::narrow_lanes(); },
            .cost_alone = kink_grid_cost,
            // PyTorch times the same 1-m-1 nets, float32, full batch.
            .torch_nets =
                [](const runner::Plan& plan) {
                    runner::TorchNets nets;
                    for (const auto& run : plan.runs) {
                        if (run.is_float64()) return runner::TorchNets{.unavailable = "the reference trains float32; this config trains float64"};
                        if (nets.samples != 0 && run.integer("samples") != nets.samples)
                            return runner::TorchNets{.unavailable = "the runs' sample counts differ"};
                        nets.samples = run.integer("samples");
                        nets.steps[{run.string("activation"), run.integer("model.width")}] += static_cast<double>(run.integer("steps"));
                    }
                    return nets;
                },
            // Per unit and sample: w x + b and y + v h forward (4), r h, r v,
            // dz x and three running sums backward (6); the activation and
            // Adam's update (per weight, not per sample) are not counted.
            .flops = [](const runner::Run& r) {
                return 10.0 * static_cast<double>(r.integer("steps")) * static_cast<double>(r.integer("samples")) *
                       static_cast<double>(r.integer("model.width"));
            },
            .live = live_kind()};
}

}  // namespace ffn::experiments::width_sweep
