// superposition: doc 003's three features in two dimensions (claims X3,
// X4, X11). The dictionary D = [v_A v_B v_C] of unit vectors 120 degrees
// apart encodes strengths a as r = D a; the stipulated readout is
// ReLU(D^T r), beside the linear pseudo-inverse readout D^+ r = (2/3) D^T r
// (D D^T = 3/2 I) to show what the ReLU buys. Then the orthogonal code
// r = a p + b q read back by dot products, and the trade-off with sparsity:
// each feature active with probability p at a strength ~ U(0, 1), the exact
// probability that the readout recovers the input beside a seeded Monte
// Carlo estimate, and the mean squared reconstruction error per input.
#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "analysis/affine_fit.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/stats.h"
#include "experiments/support/plot.h"
#include "experiments/support/run.h"
#include "report/text.h"
#include "runner/experiment.h"

namespace ffn::experiments::superposition {

namespace {

using report::Cell;
using report::ColumnType;
using Vec2 = std::array<double, 2>;
using Vec3 = std::array<double, 3>;

const double kHalfSqrt3 = std::sqrt(3.0) / 2;
const std::array<Vec2, 3> kDictionary = {Vec2{1, 0}, Vec2{-0.5, kHalfSqrt3}, Vec2{-0.5, -kHalfSqrt3}};

// Recovery counts as exact up to float64 rounding: sums of three products of
// numbers below 4 are off by a few 1e-16 at most, and an input with two
// active features misses by half the smaller strength.
constexpr double kExact = 1e-12;

Vec2 encode(const Vec3& a) {
    Vec2 r{0, 0};
    for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 2; ++k) r[k] += a[i] * kDictionary[i][k];
    return r;
}

Vec3 correlate(const Vec2& r) {  // D^T r
    Vec3 s;
    for (int i = 0; i < 3; ++i) s[i] = kDictionary[i][0] * r[0] + kDictionary[i][1] * r[1];
    return s;
}

Vec3 relu_readout(const Vec2& r) {
    Vec3 s = correlate(r);
    for (double& x : s) x = x > 0 ? x : 0;
    return s;
}

Vec3 linear_readout(const Vec2& r) {  // D^+ r = (2/3) D^T r
    Vec3 s = correlate(r);
    for (double& x : s) x *= 2.0 / 3.0;
    return s;
}

double squared_error(const Vec3& estimate, const Vec3& a) {
    double e = 0;
    for (int i = 0; i < 3; ++i) e += (estimate[i] - a[i]) * (estimate[i] - a[i]);
    return e;
}

bool exact(const Vec3& estimate, const Vec3& a) {
    for (int i = 0; i < 3; ++i)
        if (!(std::fabs(estimate[i] - a[i]) <= kExact)) return false;
    return true;
}

report::Table readout_table() {
    report::Table t("readout");
    t.add_column("case", ColumnType::text).add_key("case");
    for (const char* c : {"a_A", "a_B", "a_C", "r_1", "r_2", "dtr_A", "dtr_B", "dtr_C", "relu_A", "relu_B", "relu_C"})
        t.add_column(c, ColumnType::real);
    t.add_column("relu_exact", ColumnType::boolean);
    for (const char* c : {"linear_A", "linear_B", "linear_C"}) t.add_column(c, ColumnType::real);
    t.add_column("linear_exact", ColumnType::boolean);
    const std::vector<std::pair<std::string, Vec3>> cases = {
        {"A", {1, 0, 0}},        {"B", {0, 1, 0}},         {"C", {0, 0, 1}},    {"B at 2", {0, 2, 0}},
        {"A at 0.3", {0.3, 0, 0}}, {"A+B", {1, 1, 0}},     {"A+C", {1, 0, 1}},  {"B+C", {0, 1, 1}},
        {"A+B+C", {1, 1, 1}},    {"none", {0, 0, 0}},
    };
    for (const auto& [name, a] : cases) {
        const Vec2 r = encode(a);
        const Vec3 s = correlate(r), relu = relu_readout(r), linear = linear_readout(r);
        t.add_row({name, a[0], a[1], a[2], r[0], r[1], s[0], s[1], s[2], relu[0], relu[1], relu[2], exact(relu, a), linear[0],
                   linear[1], linear[2], exact(linear, a)});
    }
    return t;
}

// X4: p = (1, 1)/sqrt 2, q = (1, -1)/sqrt 2; r = a p + b q; a = p.r, b = q.r.
report::Table orthogonal_table() {
    const double s = 1 / std::sqrt(2.0);
    const Vec2 p{s, s}, q{s, -s};
    report::Table t("orthogonal");
    for (const char* c : {"a", "b", "r_1", "r_2", "a_read", "b_read", "max_error"}) t.add_column(c, ColumnType::real);
    t.add_column("exact", ColumnType::boolean);
    t.add_key("a");  // the four cases differ in a
    for (const auto& [a, b] : std::vector<std::pair<double, double>>{{1, 0}, {0, 1}, {2, -3}, {0.5, 0.25}}) {
        const Vec2 r{a * p[0] + b * q[0], a * p[1] + b * q[1]};
        const double a_read = p[0] * r[0] + p[1] * r[1], b_read = q[0] * r[0] + q[1] * r[1];
        const double error = std::max(std::fabs(a_read - a), std::fabs(b_read - b));
        t.add_row({a, b, r[0], r[1], a_read, b_read, error, error <= kExact});
    }
    return t;
}

// X11: exact recovery iff at most one feature is active.
double exact_probability(double p) {
    const double q = 1 - p;  // products, not std::pow: the C library's bits differ between CPUs
    return q * q * q + 3 * p * q * q;
}

report::Table sparsity_table(const runner::Run& run) {
    const auto samples = run.integer("samples");
    report::Table t("sparsity");
    t.add_column("p", ColumnType::real).add_key("p");
    t.add_column("samples", ColumnType::integer)
        .add_column("exact_probability", ColumnType::real)
        .add_column("mc_probability", ColumnType::real)
        .add_column("mc_standard_error", ColumnType::real, 3)
        .add_column("mc_within_3se", ColumnType::boolean)
        .add_column("mse_relu", ColumnType::real)
        .add_column("mse_linear", ColumnType::real)
        .add_column("mse_affine", ColumnType::real)
        .add_column("relu_beats_affine", ColumnType::boolean);
    for (const double p : run.numbers("probabilities")) {
        // One stream per (seed, p): adding a p to the list keeps the others' draws.
        Rng rng = Rng::stream(run.seed, fnv1a64("p=" + report::number_text(p)), "sparsity");
        std::int64_t recovered = 0;
        double relu_sse = 0, linear_sse = 0;
        // The best affine readout of these inputs (a map of r with an
        // intercept, fitted on the same samples: 9 coefficients against a
        // million samples, so in-sample is out-of-sample). D^+ r is the best
        // linear map with no intercept, for any input distribution.
        analysis::AffineFit affine(2, 3);
        for (std::int64_t n = 0; n < samples; ++n) {
            Vec3 a{0, 0, 0};
            for (double& x : a) {
                const bool active = rng.uniform01() < p;
                const double strength = rng.uniform01();
                x = active ? strength : 0;
            }
            const Vec2 r = encode(a);
            const Vec3 relu = relu_readout(r);
            recovered += exact(relu, a) ? 1 : 0;
            relu_sse += squared_error(relu, a);
            linear_sse += squared_error(linear_readout(r), a);
            affine.add(r, a);
        }
        const double count = static_cast<double>(samples);
        const double estimate = static_cast<double>(recovered) / count;
        const double exact_p = exact_probability(p);
        const double se = std::sqrt(exact_p * (1 - exact_p) / count);
        const double affine_mse = affine.residual_sum_of_squares() / count;
        t.add_row({p, samples, exact_p, estimate, se, std::fabs(estimate - exact_p) <= 3 * se, relu_sse / count,
                   linear_sse / count, affine_mse, relu_sse / count < affine_mse});
    }
    return t;
}

// 003: "in a large space, many directions can be weakly overlapping without
// being exactly orthogonal". Per dimension d, ratio x d directions drawn
// uniformly on the sphere (normalised Gaussians), and over every pair the
// median and the largest |cos|; beside them the Welch bound, the least
// largest |cos| that any n unit vectors in d dimensions can reach,
// sqrt((n - d) / (d (n - 1))). The triangle of three in two has 1/2.
report::Table overlap_table(const runner::Run& run) {
    report::Table t("overlap");
    t.add_column("d", ColumnType::integer).add_key("d");
    t.add_column("directions", ColumnType::integer)
        .add_column("median_abs_cos", ColumnType::real, 4)
        .add_column("max_abs_cos", ColumnType::real, 4)
        .add_column("welch_bound", ColumnType::real, 4);
    const auto ratio = static_cast<std::size_t>(run.integer("overlap_ratio"));
    for (const double dim : run.numbers("overlap_dims")) {
        const auto d = static_cast<std::size_t>(dim), n = ratio * d;
        // One stream per (seed, d): adding a dimension keeps the others' draws.
        Rng rng = Rng::stream(run.seed, fnv1a64("d=" + std::to_string(d)), "overlap");
        std::vector<double> v(n * d);
        for (std::size_t i = 0; i < n; ++i) {
            double norm2 = 0;
            for (std::size_t k = 0; k < d; ++k) norm2 += (v[i * d + k] = rng.normal()) * v[i * d + k];
            const double norm = std::sqrt(norm2);
            for (std::size_t k = 0; k < d; ++k) v[i * d + k] /= norm;
        }
        std::vector<double> cosines;
        cosines.reserve(n * (n - 1) / 2);
        for (std::size_t i = 0; i < n; ++i)
            for (std::size_t j = i + 1; j < n; ++j) {
                double dot = 0;
                for (std::size_t k = 0; k < d; ++k) dot += v[i * d + k] * v[j * d + k];
                cosines.push_back(std::fabs(dot));
            }
        const double largest = *std::max_element(cosines.begin(), cosines.end());
        const double nd = static_cast<double>(n), dd = static_cast<double>(d);
        t.add_row({static_cast<std::int64_t>(d), static_cast<std::int64_t>(n), median(std::move(cosines)), largest,
                   std::sqrt((nd - dd) / (dd * (nd - 1)))});
    }
    return t;
}

std::vector<report::Table> run_superposition(const runner::Run& run) {
    return {readout_table(), orthogonal_table(), sparsity_table(run), overlap_table(run)};
}

// --plot: the sparsity trade-off against p: the exact probability of
// perfect recovery with the Monte Carlo estimate and its 3-SE bars, and the
// mean squared reconstruction error of the ReLU and linear readouts.
void plot_superposition(const runner::Plan&, const std::vector<report::Table>& tables, const std::string& dir,
                        const runner::PlotChoice&) {
    std::filesystem::create_directories(dir);
    const report::Table& t = plot::find_table(tables, "sparsity", "superposition");
    std::vector<double> three_se = plot::numbers(t, "mc_standard_error");
    for (double& v : three_se) v *= 3;
    plot::render(plot::header("3 features in 2 dimensions: P(the ReLU readout is exact)", "p, the probability that a feature is active", "probability") +
                     "set logscale x\n" +
                     plot::data_block("s", {plot::numbers(t, "p"), plot::numbers(t, "exact_probability"),
                                            plot::numbers(t, "mc_probability"), three_se}) +
                     "plot $s using 1:2 with lines lw 2 title '(1-p)^3 + 3p(1-p)^2', "
                     "$s using 1:3:4 with yerrorbars pt 7 title 'Monte Carlo +- 3 SE'\n",
                 (std::filesystem::path(dir) / "exact_recovery.svg").string());
    // Log y: at p = 0.01 the ReLU readout's error is an eightieth of the
    // linear one's, which a linear axis draws as the same zero.
    plot::render(plot::header("mean squared reconstruction error per input", "p", "MSE (log scale)") + "set logscale xy\nset format y '%g'\n" +
                     plot::data_block("e", {plot::numbers(t, "p"), plot::numbers(t, "mse_relu"), plot::numbers(t, "mse_linear"),
                                            plot::numbers(t, "mse_affine")}) +
                     "plot $e using 1:2 with linespoints lw 2 title 'ReLU readout', "
                     "$e using 1:3 with linespoints lw 2 title 'linear readout', "
                     "$e using 1:4 with linespoints lw 2 title 'best affine readout'\n",
                 (std::filesystem::path(dir) / "reconstruction_error.svg").string());
}

}  // namespace

runner::ExperimentKind make() {
    using runner::Json;
    using runner::KeyType;
    runner::Schema schema;
    schema.add({.path = "probabilities", .type = KeyType::number_list,
                .default_value = Json::parse("[0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1]"),
                .help = "each feature's probability of being active, one sparsity row each"});
    schema.add({.path = "samples", .type = KeyType::integer, .default_value = 1000000, .min = 1.0, .max = 1e8,
                .help = "Monte Carlo inputs per probability"});
    schema.add({.path = "overlap_dims", .type = KeyType::number_list, .default_value = Json::parse("[2, 10, 100, 1000]"),
                .help = "dimensions d of the overlap table: random directions on the sphere, integers from 2 to 1000"});
    schema.add({.path = "overlap_ratio", .type = KeyType::integer, .default_value = 2, .min = 2.0, .max = 4.0,
                .help = "the overlap table draws ratio x d directions in d dimensions"});
    return {.name = "superposition",
            .description = "3 features in 2 dimensions: the ReLU readout, the orthogonal code, the sparsity trade-off",
            .schema = std::move(schema),
            .headlines = {{"readout", {"case", "relu_exact", "linear_exact"}}, {"overlap", {"d", "directions", "median_abs_cos", "max_abs_cos", "welch_bound"}}, {"sparsity", {"p", "exact_probability", "mc_probability", "mse_relu", "mse_linear", "mse_affine", "relu_beats_affine"}}},
            .validate =
                [](const runner::Plan& plan) {
                    for (const runner::Run* first : plan.first_run_of_each_point()) {
                        const runner::Run& run = *first;
                        if (!run.is_float64())
                            throw Error("key 'dtype': superposition computes in float64 only (its exactness is float64's)");
                        for (const double p : run.numbers("probabilities"))
                            if (!(p >= 0 && p <= 1))
                                throw Error("key 'probabilities': " + report::number_text(p) + " is not a probability in [0, 1]");
                        // At most 1000 dimensions at ratio 4: 8e6 pairs, 64 MB of
                        // cosines and about 8e9 multiply-adds.
                        for (const double d : run.numbers("overlap_dims"))
                            if (!(d >= 2 && d <= 1000 && d == std::floor(d)))
                                throw Error("key 'overlap_dims': " + report::number_text(d) + " is not an integer from 2 to 1000");
                    }
                },
            .run = run_superposition,
            .plot = plot_superposition};
}

}  // namespace ffn::experiments::superposition
