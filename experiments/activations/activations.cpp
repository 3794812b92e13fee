// activations: the activation functions of doc 002's table (claims X7),
// through the library's own nn::activate and nn::activate_derivative, the
// functions training uses, in the run's dtype: values on a grid of z; per
// activation its least value and where (bisection on the derivative's sign
// to 1e-9 in z, as far as the dtype resolves), its limits, where it is
// exactly zero; and how far the tanh form of GELU strays from the erf form.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <string>
#include <vector>

#include "experiments/support/plot.h"
#include "experiments/support/run.h"
#include "nn/activation.h"
#include "report/text.h"
#include "runner/experiment.h"

namespace ffn::experiments::activations {

namespace {

using nn::Activation;
using report::Cell;
using report::ColumnType;

// Where the behaviour of every activation at the ends is settled: scanning
// [-kReach, kReach] finds interior minima, and values at kFar and 2 kFar tell
// a limit from unbounded growth.
constexpr double kReach = 12, kScanStep = 1.0 / 64, kFar = 40;
constexpr double kArgTolerance = 1e-9;

template <class T>
double f(Activation a, double z) {
    return static_cast<double>(nn::activate<T>(a, static_cast<T>(z)));
}

template <class T>
double df(Activation a, double z) {
    return static_cast<double>(nn::activate_derivative<T>(a, static_cast<T>(z)));
}

// The z in [lo, hi] where `slope` changes sign from negative to positive, by
// bisection until the bracket is kArgTolerance wide or T cannot split it
// further; NaN when the bracket holds no such change.
template <class T, class Slope>
double sign_change(Slope slope, double lo, double hi) {
    if (!(slope(lo) < 0 && slope(hi) > 0)) return std::nan("");
    while (hi - lo > kArgTolerance) {
        const double mid = static_cast<double>(static_cast<T>(lo + 0.5 * (hi - lo)));
        if (mid <= lo || mid >= hi) break;
        (slope(mid) < 0 ? lo : hi) = mid;
    }
    return static_cast<double>(static_cast<T>(lo + 0.5 * (hi - lo)));
}

// A limit as text: "+inf" / "-inf" when the values keep growing, else the
// value at kFar rounded to 1e-9 ("0" for a vanishing one).
template <class T>
std::string limit_text(Activation a, double direction) {
    const double near = f<T>(a, direction * kFar), far = f<T>(a, direction * 2 * kFar);
    if (std::fabs(far) > 1.5 * std::fabs(near) && std::fabs(near) > 1) return far > 0 ? "+inf" : "-inf";
    return report::number_text(std::round(near * 1e9) / 1e9 + 0.0);
}

struct Least {
    Cell value, at;
    std::string how;
};

template <class T>
Least least_value(Activation a) {
    std::vector<double> z, v;
    for (double x = -kReach; x <= kReach; x += kScanStep) {
        z.push_back(x);
        v.push_back(f<T>(a, x));
    }
    std::size_t best = 0;
    for (std::size_t i = 1; i < v.size(); ++i)
        if (v[i] < v[best]) best = i;
    // Attained on a stretch from the left end (ReLU's zeros).
    std::size_t last_equal = best;
    while (last_equal + 1 < v.size() && v[last_equal + 1] == v[best]) ++last_equal;
    if (last_equal > best && best == 0) return {v[best], {}, "on z <= " + report::number_text(z[last_equal])};
    if (best == 0) {
        const std::string limit = limit_text<T>(a, -1);
        if (limit == "-inf") return {{}, {}, "unbounded below as z -> -inf"};
        return {std::stod(limit), {}, "approached as z -> -inf"};
    }
    if (best + 1 == v.size()) return {{}, {}, "least at the scan's right end"};
    const double at = sign_change<T>([&](double x) { return df<T>(a, x); }, z[best - 1], z[best + 1]);
    if (std::isnan(at)) return {v[best], z[best], "attained near one point (the derivative's sign change is below T's resolution)"};
    return {f<T>(a, at), at, "attained at one point"};
}

// Where the scan meets exact zeros, as stretches: "none", "z = 0",
// "z <= -8.375, z = 0" (a stretch from the scan's left end reads as all z
// below its right end).
template <class T>
std::string zeros_text(Activation a) {
    std::vector<std::string> stretches;
    const auto n = static_cast<std::size_t>(2 * kReach / kScanStep);
    const auto z_at = [](std::size_t i) { return -kReach + static_cast<double>(i) * kScanStep; };
    for (std::size_t i = 0; i <= n; ++i) {
        if (f<T>(a, z_at(i)) != 0.0) continue;
        std::size_t j = i;
        while (j + 1 <= n && f<T>(a, z_at(j + 1)) == 0.0) ++j;
        const std::string to = report::number_text(z_at(j));
        stretches.push_back(i == 0 ? "z <= " + to : i == j ? "z = " + to : report::number_text(z_at(i)) + " <= z <= " + to);
        i = j;
    }
    if (stretches.empty()) return "none";
    std::string out;
    for (const auto& s : stretches) out += (out.empty() ? "" : ", ") + s;
    return out;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const double lo = run.number("grid.lo"), hi = run.number("grid.hi"), step = run.number("grid.step");
    if (!(hi >= lo)) throw Error("key 'grid.hi': must not be below grid.lo");
    if ((hi - lo) / step > 1e5) throw Error("keys 'grid.lo', 'grid.hi', 'grid.step': more than 100000 grid points");
    if (lo + step == lo || hi + step == hi)
        throw Error("key 'grid.step': " + report::number_text(step) + " is below the spacing of doubles at the grid's ends");
    const auto points = static_cast<std::size_t>(std::floor((hi - lo) / step + 1e-9)) + 1;
    std::vector<Activation> all;
    for (const auto& name : nn::activation_names()) all.push_back(nn::parse_activation(name));

    report::Table values("values");
    values.add_column("activation", ColumnType::text).add_column("z", ColumnType::real, 9).add_column("value", ColumnType::real, 9);
    values.add_key("activation");
    values.add_key("z");
    for (const Activation a : all)
        for (std::size_t i = 0; i < points; ++i) {
            const double z = lo + static_cast<double>(i) * step;
            values.add_row({std::string(nn::to_string(a)), z, f<T>(a, z)});
        }

    report::Table shape("shape");
    shape.add_column("activation", ColumnType::text).add_key("activation");
    shape.add_column("least_value", ColumnType::real, 9)
        .add_column("at_z", ColumnType::real, 9)
        .add_column("least", ColumnType::text)
        .add_column("limit_minus_inf", ColumnType::text)
        .add_column("limit_plus_inf", ColumnType::text)
        .add_column("zeros_in_scan", ColumnType::text);
    for (const Activation a : all) {
        const Least least = least_value<T>(a);
        shape.add_row({std::string(nn::to_string(a)), least.value, least.at, least.how, limit_text<T>(a, -1),
                       limit_text<T>(a, +1), zeros_text<T>(a)});
    }

    // gelu(z) - gelu(-z) = z, and the same for gelu_tanh, so their gap is
    // even in z: it peaks at a pair +-z*; the scan takes z >= 0, then
    // bisection on the slope of |gap| refines z*.
    const auto gap = [](double z) { return f<T>(Activation::gelu, z) - f<T>(Activation::gelu_tanh, z); };
    double best_z = 0, best = 0;
    for (double z = 0; z <= 6; z += 1.0 / 1024)
        if (std::fabs(gap(z)) > best) best = std::fabs(gap(z)), best_z = z;
    const double sign = gap(best_z) > 0 ? 1 : -1;
    double at = sign_change<T>(
        [&](double z) {
            return -sign * (df<T>(Activation::gelu, z) - df<T>(Activation::gelu_tanh, z));
        },
        best_z - 1.0 / 1024, best_z + 1.0 / 1024);
    if (std::isnan(at)) at = best_z;  // float32: the gap's slope is rounding noise there; the scan's best point
    report::Table gelu_gap("gelu_gap");
    gelu_gap.add_column("max_abs_gelu_minus_gelu_tanh", ColumnType::real, 6)
        .add_column("at_z", ColumnType::real, 9)
        .add_column("gelu_minus_gelu_tanh", ColumnType::real, 6);
    gelu_gap.add_row({std::fabs(gap(at)), at, gap(at)});
    return {values, shape, gelu_gap};
}


// --plot: every activation and its derivative on the config's z range
// widened to at least [-4, 4], in float64 through the functions training
// uses (the tables give the float32 values too).
void plot_activations(const runner::Plan& plan, const std::vector<report::Table>&, const std::string& dir,
                      const runner::PlotChoice&) {
    std::filesystem::create_directories(dir);
    const runner::Run& run = plan.runs.front();
    const double lo = std::min(-4.0, run.number("grid.lo")), hi = std::max(4.0, run.number("grid.hi"));
    constexpr std::size_t kPoints = 801;
    std::vector<std::vector<double>> values = {{}}, slopes = {{}};
    for (std::size_t k = 0; k < kPoints; ++k) values[0].push_back(lo + (hi - lo) * static_cast<double>(k) / (kPoints - 1));
    slopes[0] = values[0];
    std::string value_plots = "plot", slope_plots = "plot";
    const auto& names = nn::activation_names();
    for (std::size_t a = 0; a < names.size(); ++a) {
        const Activation act = nn::parse_activation(names[a]);
        values.emplace_back();
        slopes.emplace_back();
        for (double z : values[0]) {
            values.back().push_back(f<double>(act, z));
            slopes.back().push_back(df<double>(act, z));
        }
        const std::string sep = a ? "," : "";
        value_plots += fmt::format("{} $v using 1:{} with lines lw 2 title '{}'", sep, a + 2, names[a]);
        slope_plots += fmt::format("{} $d using 1:{} with lines lw 2 title '{}'", sep, a + 2, names[a]);
    }
    plot::render(plot::header("the activations of ffn-lab, act(z)", "z", "act(z)") + "set yrange [-2:4]\n" +
                     plot::data_block("v", values) + value_plots + "\n",
                 (std::filesystem::path(dir) / "activations.svg").string());
    plot::render(plot::header("their derivatives as backward uses them, relu at 0 giving 0", "z", "d act / dz") +
                     plot::data_block("d", slopes) + slope_plots + "\n",
                 (std::filesystem::path(dir) / "derivatives.svg").string());
}

}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    schema.add({.path = "grid.lo", .type = KeyType::number, .default_value = -3.0, .help = "first z of the values table"});
    schema.add({.path = "grid.hi", .type = KeyType::number, .default_value = 3.0, .help = "last z"});
    schema.add({.path = "grid.step", .type = KeyType::number, .default_value = 1.0, .min = 1e-6, .help = "spacing of z"});
    return {.name = "activations",
            .description = "the library's activations: values, least values and where, limits, zeros, gelu vs gelu_tanh",
            .schema = std::move(schema),
            .headlines = {{"shape", {"activation", "least_value", "at_z", "zeros_in_scan"}}, {"values", {"activation", "z", "value"}}},
            .run = by_dtype<compute<float>, compute<double>>,
            .random = false,
            .plot = plot_activations};
}

}  // namespace ffn::experiments::activations
