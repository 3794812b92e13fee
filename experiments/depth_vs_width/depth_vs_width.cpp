// depth_vs_width: composing ReLU layers makes linear pieces exponentially
// (doc 002's "Depth versus width"; claims X8). The hat g(x) = 2 relu(x) -
// 4 relu(x - 1/2) is a 1-2-1 ReLU block; L of them in sequence (2L units)
// make a sawtooth on [0, 1] with 2^L pieces, which a one-hidden-layer net
// without a skip term matches only with 2^L units or more. The same blocks give Yarotsky's
// x^2 ~ x - sum_s g^s(x) / 4^s with error 4^-(L+1). Every number comes from
// nn::MLP blocks evaluated in float64; the breakpoints are dyadic, so the
// arithmetic is exact. Beside them, random deep and shallow nets of equal
// parameter counts at init: how many pieces nets nobody built have.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <vector>

#include "analysis/kinks.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/stats.h"
#include "nn/init.h"
#include "experiments/support/run.h"
#include "nn/mlp.h"
#include "runner/experiment.h"

namespace ffn::experiments::depth_vs_width {

namespace {

using report::ColumnType;
using Matrix = nn::Matrix<double>;

nn::MLP<double> hat_block() {
    nn::MLP<double> g({1, 2, 1}, nn::Activation::relu);
    g.layers[0].weight = Matrix{{1.0}, {1.0}};
    g.layers[0].bias = nn::Vector<double>{0.0, -0.5};
    g.layers[1].weight = Matrix{{2.0, -4.0}};
    g.layers[1].bias = nn::Vector<double>{0.0};
    return g;
}

Matrix column(const std::vector<double>& x) {
    Matrix X = Matrix::from_shape({x.size(), std::size_t{1}});
    for (std::size_t i = 0; i < x.size(); ++i) X(i, 0) = x[i];
    return X;
}

std::vector<double> values(const Matrix& Y) { return std::vector<double>(Y.begin(), Y.end()); }

// The outputs of the first `count` blocks (all by default) on the points
// x, in order: outputs[s] is g^(s+1)(x).
std::vector<std::vector<double>> block_outputs(std::vector<nn::MLP<double>>& blocks, const std::vector<double>& x,
                                               std::size_t count = SIZE_MAX) {
    std::vector<std::vector<double>> out;
    Matrix X = column(x);
    for (std::size_t s = 0; s < std::min(count, blocks.size()); ++s) {
        X = blocks[s].forward(X);
        out.push_back(values(X));
    }
    return out;
}

// The composition's breakpoints on [0, 1], walked block by block: a block
// bends its input's function where that function crosses one of its
// units' switching points (analysis::kink_at). Sorted, ends included.
std::vector<double> walked_breakpoints(std::vector<nn::MLP<double>>& blocks) {
    std::set<double> points = {0.0, 1.0};
    for (std::size_t k = 0; k < blocks.size(); ++k) {
        const std::vector<double> x(points.begin(), points.end());
        const std::vector<double> f = k == 0 ? x : block_outputs(blocks, x, k).back();  // block k's input
        const auto& up = blocks[k].layers[0];
        for (std::size_t j = 0; j < up.out_features(); ++j) {
            const double c = analysis::kink_at(up.weight(j, 0), up.bias(j));
            for (std::size_t i = 0; i + 1 < x.size(); ++i)
                if ((f[i] - c) * (f[i + 1] - c) < 0)
                    points.insert(x[i] + (c - f[i]) / (f[i + 1] - f[i]) * (x[i + 1] - x[i]));
        }
    }
    return {points.begin(), points.end()};
}

// Linear pieces of the function through (x[i], y[i]): one more than the
// slope changes between consecutive segments.
std::int64_t pieces(const std::vector<double>& x, const std::vector<double>& y) {
    std::int64_t changes = 0;
    for (std::size_t i = 1; i + 1 < x.size(); ++i)
        if ((y[i] - y[i - 1]) / (x[i] - x[i - 1]) != (y[i + 1] - y[i]) / (x[i + 1] - x[i])) ++changes;
    return changes + 1;
}

// The random-net panel: at PyTorch's default init, a net of L hidden
// layers of `width` units against the one-hidden-layer net with as many
// parameters as fit in the deep one's count, pieces on [-3, 3] over
// `panel_seeds` draws (draw s from stream s; the kind has no run seeds).
report::Table random_panel(const runner::Run& run, int L) {
    const auto width = static_cast<std::size_t>(run.integer("panel_width"));
    const auto draws = static_cast<std::uint64_t>(run.integer("panel_seeds"));
    std::vector<std::size_t> deep_widths = {1};
    for (int k = 0; k < L; ++k) deep_widths.push_back(width);
    deep_widths.push_back(1);
    nn::MLP<double> deep(deep_widths, nn::Activation::relu);
    const std::size_t deep_params = nn::parameter_count(deep.parameters());
    const std::size_t units = (deep_params - 1) / 3;  // 1-m-1 with biases: 3m + 1
    nn::MLP<double> shallow({1, units, 1}, nn::Activation::relu);
    std::vector<double> deep_pieces, shallow_pieces;
    for (std::uint64_t s = 0; s < draws; ++s) {
        Rng a = Rng::stream(s, fnv1a64(fmt::format("depth_vs_width deep L={} width={}", L, width)), "init");
        nn::initialize(deep, {nn::InitScheme::torch_default}, a);
        deep_pieces.push_back(static_cast<double>(analysis::linear_pieces(deep, -3, 3)));
        Rng b = Rng::stream(s, fnv1a64(fmt::format("depth_vs_width shallow units={}", units)), "init");
        nn::initialize(shallow, {nn::InitScheme::torch_default}, b);
        shallow_pieces.push_back(static_cast<double>(analysis::linear_pieces(shallow, -3, 3)));
    }
    report::Table t("random_nets");
    t.add_column("deep_width", ColumnType::integer)
        .add_column("deep_params", ColumnType::integer)
        .add_column("deep_pieces_median", ColumnType::real, 3)
        .add_column("deep_pieces_max", ColumnType::integer)
        .add_column("deep_pieces_bound", ColumnType::integer)
        .add_column("shallow_units", ColumnType::integer)
        .add_column("shallow_params", ColumnType::integer)
        .add_column("shallow_pieces_median", ColumnType::real, 3)
        .add_column("shallow_pieces_max", ColumnType::integer)
        .add_column("shallow_pieces_bound", ColumnType::integer)
        .add_column("draws", ColumnType::integer);
    // (width + 1)^L: each layer splits every piece of its input at most
    // `width` times (left empty past 2^53, where it stops being exact). A
    // 1-m-1 net has at most m + 1 pieces.
    double bound = 1;
    for (int k = 0; k < L; ++k) bound *= static_cast<double>(width + 1);
    const report::Cell deep_bound = bound <= 0x1p53 ? report::Cell{static_cast<std::int64_t>(bound)} : report::Cell{};
    t.add_row({static_cast<std::int64_t>(width), static_cast<std::int64_t>(deep_params), median(deep_pieces),
               static_cast<std::int64_t>(*std::max_element(deep_pieces.begin(), deep_pieces.end())),
               deep_bound, static_cast<std::int64_t>(units),
               static_cast<std::int64_t>(nn::parameter_count(shallow.parameters())), median(shallow_pieces),
               static_cast<std::int64_t>(*std::max_element(shallow_pieces.begin(), shallow_pieces.end())),
               static_cast<std::int64_t>(units + 1), static_cast<std::int64_t>(draws)});
    return t;
}

std::vector<report::Table> run_depth(const runner::Run& run) {
    const auto L = static_cast<int>(run.integer("depth"));
    const auto refine = static_cast<int>(run.integer("grid_refine"));
    std::vector<nn::MLP<double>> blocks;
    for (int s = 0; s < L; ++s) blocks.push_back(hat_block());

    const std::vector<double> breaks = walked_breakpoints(blocks);
    const std::vector<double> at_breaks = block_outputs(blocks, breaks).back();
    const std::int64_t walked = pieces(breaks, at_breaks);

    // The dyadic grid: 2^(L + refine) intervals, exact in float64.
    const std::size_t n = std::size_t{1} << (L + refine);
    std::vector<double> grid(n + 1);
    for (std::size_t i = 0; i <= n; ++i) grid[i] = std::ldexp(static_cast<double>(i), -(L + refine));
    const auto outputs = block_outputs(blocks, grid);
    const std::vector<double>& deep = outputs.back();

    // One hidden layer with the same function: a unit per interior
    // breakpoint (its slope change) and relu(x) for the first piece's slope.
    std::vector<double> slopes;
    for (std::size_t i = 0; i + 1 < breaks.size(); ++i)
        slopes.push_back((at_breaks[i + 1] - at_breaks[i]) / (breaks[i + 1] - breaks[i]));
    const std::size_t units = slopes.size();
    nn::MLP<double> shallow({1, units, 1}, nn::Activation::relu);
    for (std::size_t j = 0; j < units; ++j) {
        shallow.layers[0].weight(j, 0) = 1.0;
        shallow.layers[0].bias(j) = -breaks[j];
        shallow.layers[1].weight(0, j) = j == 0 ? slopes[0] : slopes[j] - slopes[j - 1];
    }
    shallow.layers[1].bias(0) = at_breaks[0];
    const std::vector<double> wide = values(shallow.forward(column(grid)));
    double shallow_diff = 0;
    for (std::size_t i = 0; i <= n; ++i) shallow_diff = std::max(shallow_diff, std::fabs(wide[i] - deep[i]));

    // The fewest units a one-hidden-layer net without a linear skip term
    // needs on [0, 1]: one per interior breakpoint, each relu(x - k) or
    // relu(k - x); the second kind, active left of its kink, gives the
    // first piece its slope: relu(k - x) = relu(x - k) - (x - k). So that
    // many units suffice exactly when the first slope is minus a sum of
    // some of the slope changes, and one more unit (a kink left of the
    // interval) is needed otherwise. The sums are dyadic, so the set of
    // reachable ones is exact.
    std::set<double> reachable = {0.0};
    for (std::size_t j = 1; j < slopes.size(); ++j) {
        std::set<double> next = reachable;
        for (double v : reachable) next.insert(v - (slopes[j] - slopes[j - 1]));
        reachable = std::move(next);
    }
    const std::int64_t needed = walked - 1 + (reachable.count(slopes.front()) ? 0 : 1);

    // x^2 from the same blocks: x - sum_s g^s(x) / 4^s.
    double x2_error = 0;
    for (std::size_t i = 0; i <= n; ++i) {
        double approx = grid[i];
        for (int s = 0; s < L; ++s) approx -= std::ldexp(outputs[static_cast<std::size_t>(s)][i], -2 * (s + 1));
        x2_error = std::max(x2_error, std::fabs(approx - grid[i] * grid[i]));
    }
    const double x2_bound = std::ldexp(1.0, -2 * (L + 1));

    report::Table t("depth");
    t.add_column("deep_units", ColumnType::integer)
        .add_column("pieces", ColumnType::integer)
        .add_column("pieces_on_grid", ColumnType::integer)
        .add_column("pieces_is_2_pow_L", ColumnType::boolean)
        .add_column("shallow_units_needed", ColumnType::integer)
        .add_column("shallow_units_built", ColumnType::integer)
        .add_column("shallow_max_abs_diff", ColumnType::real)
        .add_column("x2_max_error", ColumnType::real, 9)
        .add_column("x2_bound", ColumnType::real, 9)
        .add_column("x2_error_is_bound", ColumnType::boolean);
    t.add_row({std::int64_t{2} * L, walked, pieces(grid, deep), walked == (std::int64_t{1} << L), needed,
               static_cast<std::int64_t>(units), shallow_diff, x2_error, x2_bound, x2_error == x2_bound});
    return {t, random_panel(run, L)};
}

}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    schema.add({.path = "depth", .type = KeyType::integer, .default_value = 4, .min = 1.0, .max = 16.0,
                .help = "L, the number of hat blocks composed"});
    schema.add({.path = "grid_refine", .type = KeyType::integer, .default_value = 4, .min = 1.0, .max = 6.0,
                .help = "the check grid has 2^(L + grid_refine) intervals"});
    schema.add({.path = "panel_width", .type = KeyType::integer, .default_value = 4, .min = 1.0, .max = 64.0,
                .help = "units per hidden layer of the random deep nets"});
    schema.add({.path = "panel_seeds", .type = KeyType::integer, .default_value = 100, .min = 1.0, .max = 10000.0,
                .help = "random draws of each net in the random-net panel"});
    return {.name = "depth_vs_width",
            .description = "composed ReLU hats: 2^L pieces from 2L units, the shallow net it takes, x^2 to 4^-(L+1); random nets' pieces",
            .schema = std::move(schema),
            .headlines = {{"depth", {"deep_units", "pieces", "shallow_units_needed", "x2_max_error", "x2_bound"}}, {"random_nets", {"deep_width", "deep_pieces_median", "shallow_units", "shallow_pieces_median"}}},
            // The shallow net's hidden layer on the grid is the largest
            // array: 2^(L + grid_refine) points x 2^L units.
            .validate =
                [](const runner::Plan& plan) {
                    refuse_runs_beyond_memory(plan, {"depth", "grid_refine"}, [](const runner::Run& r) {
                        const double L = static_cast<double>(r.integer("depth"));
                        return 8.0 * 4 * (std::exp2(L + static_cast<double>(r.integer("grid_refine"))) + 1) * std::exp2(L);
                    });
                },
            .run = run_depth,
            .random = false};
}

}  // namespace ffn::experiments::depth_vs_width
