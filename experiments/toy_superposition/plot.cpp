#include "experiments/toy_superposition/plot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/thread_pool.h"
#include "experiments/support/plot.h"
#include "experiments/toy_superposition/two_in_one.h"
#include "report/text.h"

namespace ffn::experiments::toy_superposition {

namespace {

namespace fs = std::filesystem;

// The label of each row's point of the grid: its swept values but the
// seed ("S = 0.9"), or the config's sparsity when nothing is swept.
std::vector<std::string> point_labels(const runner::Plan& plan, const report::Table& t) {
    std::vector<std::string> label(t.row_count());
    for (std::size_t r = 0; r < t.row_count(); ++r) {
        for (const auto& key : plan.swept_keys)
            if (key != "seed")
                label[r] += (label[r].empty() ? "" : ", ") + (key == "sparsity" ? std::string("S") : key) + " = " +
                            report::format_cell(t.at(r, key), 6);
        if (label[r].empty()) label[r] = "S = " + report::number_text(plan.runs.front().number("sparsity"));
    }
    return label;
}

// The distinct labels of the rows of seed `drawn`, in table order: one
// panel each.
std::vector<std::string> panels_of(const std::vector<std::string>& label, const std::vector<double>& seed, double drawn) {
    std::vector<std::string> out;
    for (std::size_t r = 0; r < label.size(); ++r)
        if (seed[r] == drawn && std::find(out.begin(), out.end(), label[r]) == out.end()) out.push_back(label[r]);
    return out;
}

std::string multiplot(std::size_t panels, const std::string& title) {
    const std::size_t across = std::min<std::size_t>(4, panels), down = (panels + across - 1) / across;
    return fmt::format("set multiplot layout {},{} title '{}'\n", down, across, plot::plain_title(title));
}

// The paper's colours for features by importance: the most important
// bright yellow, the least dark purple (viridis' ends).
constexpr const char* kImportancePalette = "set palette defined (0 '#FDE725', 0.5 '#21918C', 1 '#440154')\n";

// columns.svg, for m = 2: each feature's column W_i as a line from the
// origin ending in a dot, as the paper draws its pentagons, one panel per
// point; the unit circle grey.
void plot_columns(const runner::Plan& plan, const report::Table& features, double drawn, std::int64_t n, const std::string& dir) {
    const std::vector<std::string> label = point_labels(plan, features);
    const std::vector<double> seed = plot::numbers(features, "seed"), feature = plot::numbers(features, "feature");
    const std::vector<double> w0 = plot::numbers(features, "w_0"), w1 = plot::numbers(features, "w_1");
    const std::vector<std::string> panels = panels_of(label, seed, drawn);
    std::string body = multiplot(panels.size(), fmt::format("columns W_i of W: n = {} features in m = 2 dimensions, seed {} "
                                                            "(colour: importance, yellow the most)",
                                                            n, static_cast<std::uint64_t>(drawn))) +
                       "set size ratio -1\nset xrange [-1.4:1.4]\nset yrange [-1.4:1.4]\nunset key\nunset xtics\nunset ytics\n"
                       "unset colorbox\n" + fmt::format("set cbrange [0:{}]\n", std::max<std::int64_t>(n - 1, 1)) + kImportancePalette +
                       "set object 1 circle at 0,0 size 1 fs empty border rgb '#BBBBBB'\n";
    for (const std::string& v : panels) {
        std::vector<std::vector<double>> cols(5);
        for (std::size_t r = 0; r < seed.size(); ++r)
            if (seed[r] == drawn && label[r] == v) {
                cols[0].push_back(0), cols[1].push_back(0), cols[2].push_back(w0[r]), cols[3].push_back(w1[r]);
                cols[4].push_back(feature[r]);
            }
        body += "set title '" + plot::plain_title(v) + "'\n" + plot::data_block("w", cols) +
                "plot $w using 1:2:3:4:5 with vectors nohead lw 3 lc palette, $w using 3:4:5 with points pt 7 ps 1.3 lc palette\n";
    }
    plot::render(plot::header("", "", "") + body + "unset multiplot\n", (fs::path(dir) / "columns.svg").string());
}

// norms.svg, for m > 2 (and n <= 64), the paper's n = 20 figure: per point, each
// feature's ||W_i|| as a bar in order of importance, coloured by how much
// of it the other features share (sum over j != i of (W_i^ . W_j)^2:
// dark alone in its dimensions, yellow in superposition).
void plot_norms(const runner::Plan& plan, const report::Table& features, double drawn, std::int64_t n, std::int64_t m,
                const std::string& dir) {
    const std::vector<std::string> label = point_labels(plan, features);
    const std::vector<double> seed = plot::numbers(features, "seed"), feature = plot::numbers(features, "feature");
    const std::vector<double> norm = plot::numbers(features, "norm"), shared = plot::numbers(features, "interference");
    const std::vector<std::string> panels = panels_of(label, seed, drawn);
    double top = 1;
    for (std::size_t r = 0; r < seed.size(); ++r)
        if (seed[r] == drawn && std::isfinite(norm[r])) top = std::max(top, norm[r]);
    std::string body = multiplot(panels.size(), fmt::format("||W_i||, features 0 to {} by importance, m = {}, seed {} (dark: alone, yellow: superposed)",
                                                            n - 1, m, static_cast<std::uint64_t>(drawn))) +
                       "set style fill solid 0.9 noborder\nset boxwidth 0.8\nunset key\nunset colorbox\nset cbrange [0:1]\n"
                       "set palette defined (0 '#222222', 0.5 '#21918C', 1 '#FDE725')\n" +
                       fmt::format("set xrange [-0.7:{}]\nset yrange [0:{:.3g}]\nunset xlabel\nunset ylabel\nset ytics 0.5\n"
                                   "set xtics {}\nset grid noxtics\n",
                                   static_cast<double>(n) - 0.3, top * 1.1, n > 20 ? 10 : 5) +
                       fmt::format("set arrow from graph 0, first 0.5 to graph 1, first 0.5 nohead dt 2 lc rgb '#888888'\n");
    for (const std::string& v : panels) {
        std::vector<std::vector<double>> cols(3);
        for (std::size_t r = 0; r < seed.size(); ++r)
            if (seed[r] == drawn && label[r] == v)
                cols[0].push_back(feature[r]), cols[1].push_back(norm[r]), cols[2].push_back(std::min(1.0, shared[r]));
        body += "set title '" + plot::plain_title(v) + "'\n" + plot::data_block("w", cols) +
                "plot $w using 1:2:3 with boxes lc palette\n";
    }
    plot::render(plot::header("", "", "") + body + "unset multiplot\n", (fs::path(dir) / "norms.svg").string());
}

// The phases of two_in_one.h in a fixed order: their fill (a light tint)
// and marker colours.
struct Phase {
    const char* name;
    const char* fill;
    int colour;  // linetype of plot::kPalette
};
constexpr std::array<Phase, 5> kPhases{{{"feature 0 dedicated", "#BFD9EC", 1},
                                        {"feature 1 dedicated", "#F3CDB5", 2},
                                        {"antipodal", "#B3E0D3", 3},
                                        {"both, same side", "#EED5E4", 4},
                                        {"none", "#DDDDDD", 7}}};
int phase_index(const std::string& name) {
    for (std::size_t k = 0; k < kPhases.size(); ++k)
        if (name == kPhases[k].name) return static_cast<int>(k);
    throw Error("--plot: toy_superposition: no phase is named '" + name + "'");
}

// The phase a table cell names, or -1: a point whose every model diverged
// has none, and a grid that sweeps the sizes names outcomes of its own.
int phase_of_cell(const report::Cell& cell) {
    const auto* name = std::get_if<std::string>(&cell);
    if (!name) return -1;
    for (std::size_t k = 0; k < kPhases.size(); ++k)
        if (*name == kPhases[k].name) return static_cast<int>(k);
    return -1;
}

// phase_diagram.svg: the phase of least exact loss on a fine grid over the
// swept range (log10 axes drawn as an image), the boundaries between
// phases found by bisection along each row, and each swept point's trained
// phase on top: a marker in the phase's colour, ringed where it is not the
// optimum's, with the number of its models that reached it.
void plot_phase_diagram(const runner::Plan& plan, const report::Table& points, const std::string& dir) {
    const std::vector<double> r = plot::numbers(points, "importance_decay"), sp = plot::numbers(points, "sparsity");
    const std::vector<double> reached = plot::numbers(points, "outcome_seeds");
    const auto [r_lo, r_hi] = std::minmax_element(r.begin(), r.end());
    const auto [s_lo, s_hi] = std::minmax_element(sp.begin(), sp.end());
    // The frame: the data's range on log axes, widened by 4% each way so
    // that no marker is cut, but never above density 1.
    const double x0 = std::log10(*r_lo), x1 = std::log10(*r_hi), y0 = std::log10(1 - *s_hi), y1 = std::log10(1 - *s_lo);
    const double pad_x = 0.04 * std::max(x1 - x0, 0.5), pad_y = 0.04 * std::max(y1 - y0, 0.5);
    const double fx0 = x0 - pad_x, fx1 = x1 + pad_x, fy0 = y0 - pad_y, fy1 = std::min(0.0, y1 + pad_y), frame_top = y1 + pad_y;
    constexpr int kColumns = 81, kRows = 61, kBisections = 10;
    const auto x_at = [&](int i) { return fx0 + (fx1 - fx0) * i / (kColumns - 1); };
    const auto y_at = [&](int j) { return fy0 + (fy1 - fy0) * j / (kRows - 1); };
    const auto optimum = [](double lx, double ly) { return phase_index(two_in_one_optimum(std::pow(10.0, lx), 1 - std::pow(10.0, ly)).phase); };
    // Every grid point, then every crossing, is a minimisation of its own
    // (two_in_one_optimum, about 0.6 ms): spread over the cores.
    ThreadPool pool;
    std::vector<int> phase(kRows * kColumns);
    pool.parallel_for(phase.size(), [&](std::size_t p) { phase[p] = optimum(x_at(p % kColumns), y_at(p / kColumns)); });
    std::vector<std::vector<double>> grid(3);
    for (std::size_t p = 0; p < phase.size(); ++p)
        grid[0].push_back(x_at(p % kColumns)), grid[1].push_back(y_at(p / kColumns)), grid[2].push_back(phase[p]);
    // Where two neighbours of the grid differ, along a row or a column, the
    // boundary between their phases is found by bisection; each pair's
    // points are then chained nearest first into lines.
    struct Crossing {
        std::array<double, 2> a, b;
        int phase_a, phase_b;
    };
    std::vector<Crossing> found;
    for (int j = 0; j < kRows; ++j)
        for (int i = 0; i < kColumns; ++i) {
            const int here = phase[j * kColumns + i];
            if (i + 1 < kColumns && here != phase[j * kColumns + i + 1])
                found.push_back({{x_at(i), y_at(j)}, {x_at(i + 1), y_at(j)}, here, phase[j * kColumns + i + 1]});
            if (j + 1 < kRows && here != phase[(j + 1) * kColumns + i])
                found.push_back({{x_at(i), y_at(j)}, {x_at(i), y_at(j + 1)}, here, phase[(j + 1) * kColumns + i]});
        }
    pool.parallel_for(found.size(), [&](std::size_t c) {
        auto& [a, b, phase_a, phase_b] = found[c];
        for (int k = 0; k < kBisections; ++k) {
            const std::array<double, 2> mid{(a[0] + b[0]) / 2, (a[1] + b[1]) / 2};
            (optimum(mid[0], mid[1]) == phase_a ? a : b) = mid;
        }
    });
    std::map<std::pair<int, int>, std::vector<std::array<double, 2>>> crossings;
    for (const auto& [a, b, phase_a, phase_b] : found)
        crossings[{std::min(phase_a, phase_b), std::max(phase_a, phase_b)}].push_back({(a[0] + b[0]) / 2, (a[1] + b[1]) / 2});
    const double cell = std::hypot((fx1 - fx0) / (kColumns - 1), (fy1 - fy0) / (kRows - 1));
    std::vector<std::vector<std::vector<double>>> lines;  // each a polyline {xs, ys}
    for (auto& [pair, left] : crossings) {
        // Start from the lowest point; a gap wider than two cells starts a new line.
        while (!left.empty()) {
            auto at = std::min_element(left.begin(), left.end(), [](const auto& a, const auto& b) { return a[1] < b[1]; });
            std::vector<std::vector<double>> line(2);
            std::array<double, 2> p = *at;
            left.erase(at);
            line[0].push_back(p[0]), line[1].push_back(p[1]);
            while (!left.empty()) {
                const auto distance = [&](const std::array<double, 2>& q) { return std::hypot(q[0] - p[0], q[1] - p[1]); };
                at = std::min_element(left.begin(), left.end(), [&](const auto& a, const auto& b) { return distance(a) < distance(b); });
                if (distance(*at) > 2 * cell) break;
                p = *at;
                left.erase(at);
                line[0].push_back(p[0]), line[1].push_back(p[1]);
            }
            lines.push_back(std::move(line));
        }
    }
    std::string body = "set xrange [" + fmt::format("{:.9g}:{:.9g}", fx0, fx1) + "]\nset yrange [" + fmt::format("{:.9g}:{:.9g}", fy0, frame_top) +
                       "]\nset cbrange [-0.5:4.5]\nunset colorbox\nset palette maxcolors 5\nset palette defined (";
    for (std::size_t k = 0; k < kPhases.size(); ++k) body += fmt::format("{}{} '{}'", k ? ", " : "", k, kPhases[k].fill);
    body += ")\nunset grid\nset key maxrows 4\n";
    // Ticks at the round values a reader looks up, placed on the log10 axes.
    const auto tics = [](double lo, double hi, std::initializer_list<double> values) {
        std::string out;
        for (const double v : values)
            if (std::log10(v) >= lo - 1e-9 && std::log10(v) <= hi + 1e-9)
                out += fmt::format("{}'{}' {:.9g}", out.empty() ? "" : ", ", report::number_text(v), std::log10(v));
        return "(" + out + ")";
    };
    body += "set xtics " + tics(fx0, fx1, {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100}) + "\nset ytics " +
            tics(fy0, fy1, {0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1}) + "\n";
    body += plot::data_block("grid", grid);
    std::string plots = "plot $grid using 1:2:3 with image notitle";
    for (std::size_t k = 0; k < kPhases.size(); ++k)
        if (std::find(grid[2].begin(), grid[2].end(), static_cast<double>(k)) != grid[2].end())
            plots += fmt::format(", keyentry with boxes fs solid 1.0 lc rgb '{}' title '{}'", kPhases[k].fill,
                                 plot::plain_title(std::string("optimum: ") + kPhases[k].name));
    for (std::size_t b = 0; b < lines.size(); ++b) {
        body += plot::data_block(fmt::format("b{}", b), lines[b]);
        plots += fmt::format(", $b{} using 1:2 with lines lw 2 lc rgb '#333333' {}", b, b == 0 ? "title 'boundary'" : "notitle");
    }
    // The trained points, one set per phase reached, split by whether the
    // optimum agrees.
    for (std::size_t k = 0; k < kPhases.size(); ++k) {
        std::vector<std::vector<double>> same(3), other(3);
        for (std::size_t i = 0; i < points.row_count(); ++i) {
            if (phase_of_cell(points.at(i, "outcome")) != static_cast<int>(k)) continue;
            const bool agrees = !points.find_column("optimum") || phase_of_cell(points.at(i, "optimum")) == static_cast<int>(k);
            auto& to = agrees ? same : other;
            to[0].push_back(std::log10(r[i])), to[1].push_back(std::log10(1 - sp[i])), to[2].push_back(reached[i]);
        }
        for (auto* set : {&same, &other}) {
            if ((*set)[0].empty()) continue;
            const std::string name = fmt::format("p{}{}", k, set == &same ? "s" : "o");
            body += plot::data_block(name, *set);
            plots += fmt::format(", ${} using 1:2 with points pt 7 ps 2.6 lc {} title '{}'", name, kPhases[k].colour,
                                 plot::plain_title(fmt::format("trained: {}{}", kPhases[k].name, set == &same ? "" : ", not the optimum")));
            if (set == &other) plots += fmt::format(", ${} using 1:2 with points pt 6 ps 3.2 lw 2.5 lc rgb 'black' notitle", name);
            plots += fmt::format(", ${} using 1:2:(sprintf('%d', $3)) with labels font ',10' tc rgb 'white' notitle", name);
        }
    }
    const std::size_t seeds = plan.seeds.size();
    // A keyentry here would put gnuplot 5.4's key into one column: the
    // numbers are explained in the key's title instead.
    body += fmt::format("set key title 'the number on a dot: how many of the {} models reached its phase'\n", seeds);
    plot::render(plot::header(fmt::format("two features in one dimension: least exact loss, and the best of {} trained models",
                                          seeds),
                              "relative importance of feature 1 (importance_decay)", "feature density 1 - S") +
                     body + plots + "\n",
                 (fs::path(dir) / "phase_diagram.svg").string());
}

// dimensionality.svg: each feature's D_i (of the lowest-loss model of each
// point, when the geometry table names it; else of every seed) against
// 1 / (1 - S), D* over it, and labelled lines at the fractions the paper
// finds features sticking to.
void plot_dimensionality(const runner::Plan& plan, const report::Table& features, const report::Table* geometry, const std::string& dir) {
    const std::vector<double> seed = plot::numbers(features, "seed"), dims = plot::numbers(features, "dimensionality");
    const bool swept = features.find_column("sparsity").has_value();
    const std::vector<double> s = swept ? plot::numbers(features, "sparsity")
                                        : std::vector<double>(seed.size(), plan.runs.front().number("sparsity"));
    const std::vector<std::string> label = point_labels(plan, features);
    std::vector<std::vector<double>> d(2), star(2);
    std::map<std::string, double> best_seed;  // point -> its lowest-loss seed
    if (geometry) {
        const std::vector<std::string> point = point_labels(plan, *geometry);
        const std::vector<double> gb = plot::numbers(*geometry, "best_seed");
        const std::vector<double> gx = plot::numbers(*geometry, "inverse_density"), gd = plot::numbers(*geometry, "dims_per_feature");
        for (std::size_t i = 0; i < point.size(); ++i) {
            best_seed[point[i]] = gb[i];
            if (std::isfinite(gd[i])) star[0].push_back(gx[i]), star[1].push_back(gd[i]);
        }
    }
    // D* is a curve over sparsity only when nothing else is swept.
    const bool star_is_curve = std::adjacent_find(star[0].begin(), star[0].end(), std::greater_equal<>()) == star[0].end();
    double x_lo = 1e300, x_hi = 0;
    for (std::size_t r = 0; r < seed.size(); ++r) {
        const auto best = best_seed.find(label[r]);
        if (best != best_seed.end() && best->second != seed[r]) continue;
        const double x = 1 / (1 - s[r]);
        x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
        d[0].push_back(x), d[1].push_back(dims[r]);
    }
    if (d[0].empty()) return;
    std::string body = fmt::format("set logscale x\nset xrange [{:.9g}:{:.9g}]\nset yrange [-0.04:1.12]\n", x_lo / 1.15, x_hi * 1.15);
    // 2/5, 3/8 and 1/3 lie closer than a line of text: 3/8's label steps aside.
    for (const auto& [text, value, at] : std::vector<std::tuple<const char*, double, double>>{
             {"1", 1.0, 1.01}, {"3/4", 0.75, 1.01}, {"2/3", 2.0 / 3, 1.01}, {"1/2", 0.5, 1.01}, {"2/5", 0.4, 1.01}, {"3/8", 0.375, 1.06},
             {"1/3", 1.0 / 3, 1.01}})
        body += fmt::format("set arrow from graph 0, first {0:.9g} to graph 1, first {0:.9g} nohead dt 3 lc rgb '#888888' back\n"
                            "set label '{1}' at graph {2}, first {0:.9g} left tc rgb '#555555'\n",
                            value, text, at);
    body += "set rmargin 10\nset xtics (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)\n" + plot::data_block("d", d);
    std::string plots = "plot $d using 1:2 with points pt 7 ps 0.6 lc rgb '#800072B2' title 'D_i of each feature" +
                        std::string(best_seed.empty() ? "" : " (the lowest-loss model of each point)") + "'";
    if (!star[0].empty()) {
        body += plot::data_block("star", star);
        plots += fmt::format(", $star using 1:2 with {} lc rgb '#D55E00' title 'D* = m / ||W||_F^2{}'",
                             star_is_curve ? "linespoints pt 5 ps 1 lw 2.5" : "points pt 5 ps 1",
                             star_is_curve ? "" : " (of each point)");
    }
    plot::render(plot::header("dimensionality of each feature against sparsity", "1 / (1 - S)", "D_i") + body + plots + "\n",
                 (fs::path(dir) / "dimensionality.svg").string());
}

}  // namespace

void plot_toy(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir,
              const runner::PlotChoice& choice) {
    fs::create_directories(dir);
    const report::Table& features = plot::find_table(tables, "features", "toy_superposition");
    const report::Table& points = plot::find_table(tables, "points", "toy_superposition");
    const report::Table* geometry = nullptr;
    for (const auto& t : tables)
        if (t.name() == "geometry") geometry = &t;
    const auto n = plan.runs.front().integer("features"), m = plan.runs.front().integer("hidden");
    const double drawn = static_cast<double>(choice.seed ? *choice.seed : plan.seeds.front());
    if (choice.seed && std::find(plan.seeds.begin(), plan.seeds.end(), *choice.seed) == plan.seeds.end())
        throw Error(fmt::format("--plot-seed {}: the sweep ran seeds {}", *choice.seed, fmt::join(plan.seeds, ", ")));
    if (m == 2) plot_columns(plan, features, drawn, n, dir);
    // Past a few dozen features the bars are thinner than a pixel.
    if (m > 2 && n <= 64) plot_norms(plan, features, drawn, n, m, dir);
    if (n == 2 && m == 1 && points.find_column("importance_decay") && points.find_column("sparsity")) plot_phase_diagram(plan, points, dir);
    plot_dimensionality(plan, features, geometry, dir);
}

}  // namespace ffn::experiments::toy_superposition
