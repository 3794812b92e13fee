#include "experiments/width_sweep/plot.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "analysis/kinks.h"
#include "core/error.h"
#include "core/stats.h"
#include "experiments/support/plot.h"
#include "experiments/width_sweep/width_sweep.h"
#include "runner/experiment.h"
#include "report/text.h"

namespace ffn::experiments::width_sweep {

namespace {

// The run of a seed group whose RMSE is the lower median.
std::size_t median_run(const std::vector<std::size_t>& group, const report::Table& runs) {
    std::vector<std::pair<double, std::size_t>> by_rmse;
    for (std::size_t i : group)
        if (const auto r = report::as_number(runs.at(i, "rmse"))) by_rmse.emplace_back(*r, i);
    if (by_rmse.empty()) return group.front();
    std::sort(by_rmse.begin(), by_rmse.end());
    return by_rmse[(by_rmse.size() - 1) / 2].second;
}

std::string header(const std::string& title) { return plot::header(title, "x", "y"); }

// curves.svg: per seed group, the median training MSE against the step
// and the band of the middle half of the seeds (quartiles; a min-max band
// of a hundred seeds is mostly its two outliers), log scale.
void plot_curves(const runner::Plan& plan, const report::Table& curves, const std::string& dir) {
    std::map<std::string, std::map<std::int64_t, std::vector<double>>> by_run;  // run id -> step -> losses
    for (std::size_t r = 0; r < curves.row_count(); ++r)
        if (const auto loss = report::as_number(curves.at(r, "loss")))
            by_run[report::format_cell(curves.at(r, "run_id"), 0)][static_cast<std::int64_t>(*report::as_number(curves.at(r, "step")))]
                .push_back(*loss);
    std::string script = plot::header(fmt::format("training curves: median MSE over {}, the band from the first to the third quartile",
                                                  report::counted(plan.seeds.size(), "seed")),
                                      "step", "MSE") +
                         "set logscale y\nset style fill transparent solid 0.2 noborder\n";
    std::string plots = "plot";
    std::size_t shown = 0;
    for (const auto& group : runner::seed_groups(plan)) {
        std::map<std::int64_t, std::vector<double>> at_step;
        for (std::size_t i : group)
            for (const auto& [step, losses] : by_run[plan.runs[i].id_hex()]) at_step[step].insert(at_step[step].end(), losses.begin(), losses.end());
        if (at_step.empty()) continue;
        std::vector<std::vector<double>> cols(4);
        for (auto& [step, losses] : at_step) {
            cols[0].push_back(static_cast<double>(step));
            cols[1].push_back(median(losses));
            cols[2].push_back(percentile(losses, 25));
            cols[3].push_back(percentile(losses, 75));
        }
        std::string label;
        for (const auto& [key, value] : plan.runs[group.front()].swept())
            if (key != "seed")
                label += (label.empty() ? "" : " ") + (key == "model.width" ? std::string("m") : key) + "=" +
                         (value.is_string() ? value.get<std::string>() : value.dump());
        script += plot::data_block(fmt::format("g{}", shown), cols);
        plots += fmt::format("{} $g{} using 1:3:4 with filledcurves lc {} notitle, $g{} using 1:2 with lines lw 2.5 lc {} title '{}'",
                             shown ? "," : "", shown, shown % plot::kPaletteSize + 1, shown, shown % plot::kPaletteSize + 1,
                             plot::plain_title(label.empty() ? "all seeds" : label));
        ++shown;
    }
    if (shown == 0) return;
    plot::render(script + plots + "\n", (std::filesystem::path(dir) / "curves.svg").string());
}

// The label of a series: the swept keys but the width and the seed
// ("activation=gelu"), or "" when the width alone is swept.
std::string series_of(const report::Table& t, std::size_t row) {
    std::string label;
    for (const auto& key : t.keys())
        if (key != "model.width" && key != "seed" && key != "run_id")
            label += (label.empty() ? "" : " ") + key + "=" + report::format_cell(t.at(row, key), 6);
    return label;
}

// rmse.svg, claim S2's own figure: RMSE against width on log axes, each
// seed's run faint, each series' median as a line, the document's printed
// values as open diamonds, and the best any m + 1 linear pieces can do
// (the PWL bound) as a dashed line.
void plot_rmse(const runner::Plan& plan, const report::Table& runs, const report::Table& width, const std::string& dir) {
    std::vector<std::string> series;  // in the width table's order
    for (std::size_t r = 0; r < width.row_count(); ++r)
        if (const auto s = series_of(width, r); std::find(series.begin(), series.end(), s) == series.end()) series.push_back(s);
    std::set<double> widths;
    double lo = std::numeric_limits<double>::infinity(), hi = 0;
    const auto see = [&](double v) {
        if (std::isfinite(v) && v > 0) lo = std::min(lo, v), hi = std::max(hi, v);
    };
    std::string script, plots;
    const auto add = [&](const std::string& item) { plots += (plots.empty() ? "" : ", ") + item; };
    for (std::size_t k = 0; k < series.size(); ++k) {
        const std::string colour = plot::distinct_colour(k, series.size());
        std::vector<std::vector<double>> seeds(2), medians(2), doc(2), bound(2);
        for (std::size_t r = 0; r < runs.row_count(); ++r) {
            if (series_of(runs, r) != series[k]) continue;
            // The runs table has a width column only where the width is swept.
            const auto m = runs.find_column("model.width") ? report::as_number(runs.at(r, "model.width"))
                                                            : std::optional<double>(static_cast<double>(plan.runs.front().integer("model.width")));
            const auto e = report::as_number(runs.at(r, "rmse"));
            if (!m || !e || !(*e > 0)) continue;
            seeds[0].push_back(*m), seeds[1].push_back(*e), see(*e);
        }
        for (std::size_t r = 0; r < width.row_count(); ++r) {
            if (series_of(width, r) != series[k]) continue;
            const double m = *report::as_number(width.at(r, "model.width"));
            widths.insert(m);
            const auto take = [&](std::vector<std::vector<double>>& to, const char* column) {
                if (!width.find_column(column)) return;
                if (const auto v = report::as_number(width.at(r, column)); v && *v > 0) to[0].push_back(m), to[1].push_back(*v), see(*v);
            };
            take(medians, "rmse_median");
            take(doc, "rmse_doc");
            if (k == 0) take(bound, "pwl_bound_rmse");
        }
        const std::string name = series[k].empty() ? "" : series[k] + ": ";
        if (!seeds[0].empty()) {
            script += plot::data_block(fmt::format("seeds{}", k), seeds);
            add(fmt::format("$seeds{} using 1:2 with points pt 7 ps 0.5 lc rgb '#B0{}' title '{}each seed'", k, colour.substr(1),
                            plot::plain_title(name)));
        }
        if (!medians[0].empty()) {
            script += plot::data_block(fmt::format("median{}", k), medians);
            add(fmt::format("$median{} using 1:2 with linespoints pt 5 ps 1.2 lw 3 lc rgb '{}' title '{}median'", k, colour,
                            plot::plain_title(name)));
        }
        if (!doc[0].empty()) {
            script += plot::data_block(fmt::format("doc{}", k), doc);
            add(fmt::format("$doc{} using 1:2 with points pt 12 ps 2.5 lw 2.5 lc rgb 'black' title '{}the document'", k,
                            plot::plain_title(name)));
        }
        if (!bound[0].empty()) {
            script += plot::data_block("bound", bound);
            add("$bound using 1:2 with lines dt 2 lw 2 lc rgb '#555555' title 'best m+1 linear pieces (PWL bound)'");
        }
    }
    if (plots.empty() || widths.empty()) return;
    // Axes exactly the data's range, a little room so no marker touches
    // the frame; ticks at the swept widths; whole decades on y.
    const double x_lo = *widths.begin(), x_hi = *widths.rbegin();
    std::string xtics;
    for (const double m : widths) xtics += fmt::format("{}'{}' {:.9g}", xtics.empty() ? "" : ", ", m, m);
    std::string head = plot::header(fmt::format("{} fitted by 1-m-1 nets: RMSE against width over {}", plan.runs.front().string("target"),
                                                report::counted(plan.seeds.size(), "seed")),
                                    "hidden units m", "RMSE (log scale)");
    head += fmt::format("set logscale x 2\nset logscale y\nset xrange [{:.9g}:{:.9g}]\nset yrange [{:.9g}:{:.9g}]\nset xtics ({})\n",
                        x_lo / 1.25, x_hi * 1.25, lo / 1.5, hi * 1.5, xtics);
    plot::render(head + script + "plot " + plots + "\n", (std::filesystem::path(dir) / "rmse.svg").string());
}

}  // namespace

void plot_width_sweep(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir,
                      const runner::PlotChoice& choice) {
    const report::Table* runs = nullptr;
    for (const auto& t : tables)
        if (t.name() == "runs") runs = &t;
    if (!runs) throw Error("--plot: the width sweep produced no 'runs' table");
    std::filesystem::create_directories(dir);

    const runner::Run& first = plan.runs.front();
    const FitData data = make_fit_data(first);
    const std::size_t points = 801;
    std::vector<double> xs(points), target(points);
    const auto f = target_curve(first, data);
    for (std::size_t k = 0; k < points; ++k) {
        xs[k] = data.lo + (data.hi - data.lo) * double(k) / double(points - 1);
        target[k] = f(xs[k]);
    }

    if (choice.seed && std::find(plan.seeds.begin(), plan.seeds.end(), *choice.seed) == plan.seeds.end())
        throw Error(fmt::format("--plot-seed {}: the sweep ran seeds {}", *choice.seed, fmt::join(plan.seeds, ", ")));
    // The median seed of every width, or the chosen one, retrained (runs
    // are deterministic).
    std::vector<FittedNet> fits;
    std::vector<std::int64_t> widths;
    std::vector<std::uint64_t> seeds;
    for (const auto& group : runner::seed_groups(plan)) {
        std::size_t drawn = median_run(group, *runs);
        for (std::size_t i : group)
            if (choice.seed && plan.runs[i].seed == *choice.seed) drawn = i;
        const runner::Run& run = plan.runs[drawn];
        fits.push_back(fit_width_runs(std::span(&run, 1), make_fit_data(run)).front());
        widths.push_back(run.integer("model.width"));
        seeds.push_back(run.seed);
    }

    // fits.svg
    std::vector<std::vector<double>> cols = {xs, target};
    for (const auto& fit : fits) {
        cols.emplace_back();
        for (double x : xs) cols.back().push_back(fit.at(x));
    }
    const double y_lo = *std::min_element(target.begin(), target.end());
    const double y_hi = *std::max_element(target.begin(), target.end());
    const auto kink_row = [&](std::size_t i) { return y_lo - (y_hi - y_lo) * (0.08 + 0.09 * double(i)); };
    const std::string fits_svg = (std::filesystem::path(dir) / "fits.svg").string();
    std::string script = header("fits of " + first.string("target") + " by width: " +
                                (choice.seed ? fmt::format("seed {}", *choice.seed) : std::string("each width's median seed")) +
                                ", its kinks below");
    // The y axis: ticks over the target's range, and below it one row of
    // kinks per width, named where a tick label would be.
    const double span = y_hi - y_lo;
    const double step = plot::nice_step(span / 4);
    script += fmt::format("set ytics {:.9g}, {:.9g}, {:.9g}\nset yrange [{:.9g}:*]\n", std::floor(y_lo / step + 0.01) * step, step,
                          y_hi + step / 2, kink_row(fits.size()));
    script += plot::data_block("curves", cols);
    std::string plots = fmt::format("plot $curves using 1:2 with lines {} title 'target'", plot::kTargetStyle);
    for (std::size_t i = 0; i < fits.size(); ++i) {
        std::vector<double> kx, ky;
        for (std::size_t j = 0; j < fits[i].w.size() && nn::is_piecewise_linear(fits[i].activation); ++j) {
            const double at = analysis::kink_at(fits[i].w[j], fits[i].b[j]);
            if (at > data.lo && at < data.hi) {
                kx.push_back(at);
                ky.push_back(kink_row(i));
            }
        }
        // The activation in the title only when the plot holds several.
        const bool mixed = std::any_of(fits.begin(), fits.end(), [&](const FittedNet& f) { return f.activation != fits[0].activation; });
        const std::string unit = mixed ? fmt::format("{} m={}", nn::to_string(fits[i].activation), widths[i])
                                       : fmt::format("m={}", widths[i]);
        const std::string label = fmt::format("{}: RMSE {:.3g} (seed {})", unit, fits[i].rmse, seeds[i]);
        plots += fmt::format(", $curves using 1:{} with lines lw 2 lc {} title '{}'", i + 3, i % plot::kPaletteSize + 1, plot::plain_title(label));
        if (!kx.empty()) {
            script += plot::data_block(fmt::format("kinks{}", i), {kx, ky});
            plots += fmt::format(", $kinks{} using 1:2 with points pt 9 ps 1 lc {} notitle", i, i % plot::kPaletteSize + 1);
            script += fmt::format("set ytics add ('{} kinks' {:.9g})\n", plot::plain_title(unit), ky.front());
        }
    }
    plot::render(script + plots + "\n", fits_svg);

    // ramps.svg: the chosen width, else width 8 if there is one, else the
    // middle width (the first of several activations).
    const std::int64_t wanted = choice.width.value_or(8);
    std::size_t pick = choice.width ? fits.size() : fits.size() / 2;
    for (std::size_t i = widths.size(); i-- > 0;)
        if (widths[i] == wanted) pick = i;
    if (pick == fits.size())
        throw Error(fmt::format("--plot-width {}: the sweep's widths are {}", wanted, fmt::join(widths, ", ")));
    const FittedNet& net = fits[pick];
    std::vector<std::vector<double>> ramps = {xs, target, {}};
    for (double x : xs) ramps[2].push_back(net.at(x));
    for (std::size_t j = 0; j < net.w.size(); ++j) {
        ramps.emplace_back();
        for (double x : xs) ramps.back().push_back(net.unit(j, x));
    }
    const std::string ramps_svg = (std::filesystem::path(dir) / "ramps.svg").string();
    script = "set ytics auto\n" +
             header(fmt::format("m={} {} fit (seed {}): bias {:.3g} + units v_j {}(w_j x + b_j)", widths[pick],
                                nn::to_string(net.activation), seeds[pick], net.c, nn::to_string(net.activation)));
    // A unit can run far beyond the target (a steep ramp cancelled by
    // another): the range stays the target's, with room, so that the fit
    // can be read.
    script += fmt::format("set yrange [{:.9g}:{:.9g}]\n", y_lo - 1.5 * span, y_hi + 1.5 * span);
    script += plot::data_block("ramps", ramps);
    plots = fmt::format("plot $ramps using 1:2 with lines {} title 'target', "
                        "$ramps using 1:3 with lines lw 3 lc rgb 'black' title 'fit (the sum)'",
                        plot::kTargetStyle);
    // Every unit its own colour; past 16 units a legend line each would
    // bury the figure, so the title says how many there are instead.
    const std::size_t units = net.w.size();
    for (std::size_t j = 0; j < units; ++j)
        plots += fmt::format(", $ramps using 1:{} with lines dt 2 lw 1.5 lc rgb '{}' {}", j + 4, plot::distinct_colour(j, units),
                             units <= 16 ? fmt::format("title 'unit {}'", j + 1) : (j == 0 ? fmt::format("title '{} units'", units) : "notitle"));
    plot::render(script + plots + "\n", ramps_svg);
    for (const auto& t : tables) {
        if (t.name() == "curves") plot_curves(plan, t, dir);
        if (t.name() == "width") plot_rmse(plan, *runs, t, dir);
    }
}

}  // namespace ffn::experiments::width_sweep
