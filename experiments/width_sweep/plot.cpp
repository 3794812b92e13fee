#include "experiments/width_sweep/plot.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

#include "core/error.h"
#include "experiments/width_sweep/target.h"
#include "experiments/width_sweep/width_sweep.h"
#include "runner/experiment.h"

namespace ffn::experiments {

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

void run_gnuplot(const std::string& script, const std::string& output) {
    FILE* pipe = ::popen("gnuplot", "w");
    if (!pipe) throw Error("--plot: cannot start gnuplot (apt-get install gnuplot-nox)");
    std::fwrite(script.data(), 1, script.size(), pipe);
    const int status = ::pclose(pipe);
    if (status != 0 || !std::filesystem::exists(output))
        throw Error(fmt::format("--plot: gnuplot failed to write {} (status {}; apt-get install gnuplot-nox)", output, status));
}

// A gnuplot datablock: one row per x, one column per series.
std::string data_block(const std::string& name, const std::vector<std::vector<double>>& columns) {
    std::string out = "$" + name + " << EOD\n";
    for (std::size_t r = 0; r < columns.front().size(); ++r) {
        for (std::size_t c = 0; c < columns.size(); ++c) out += fmt::format("{}{:.9g}", c ? " " : "", columns[c][r]);
        out += "\n";
    }
    return out + "EOD\n";
}

std::string header(const std::string& output, const std::string& title) {
    return fmt::format(
        "set terminal svg size 960,600 dynamic background rgb 'white' noenhanced\nset output '{}'\nset title \"{}\"\n"
        "set xlabel 'x'\nset ylabel 'y'\nset key outside right\nset grid\n",
        output, title);
}

}  // namespace

void plot_width_sweep(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir) {
    const report::Table* runs = nullptr;
    for (const auto& t : tables)
        if (t.name() == "runs") runs = &t;
    if (!runs) throw Error("--plot: the width sweep produced no 'runs' table");
    std::filesystem::create_directories(dir);

    const runner::Run& first = plan.runs.front();
    const FitData data = make_fit_data(first);
    const std::size_t points = 801;
    std::vector<double> xs(points), target(points);
    TargetFunction f(first.string("target"), "target");
    for (std::size_t k = 0; k < points; ++k) {
        xs[k] = data.lo + (data.hi - data.lo) * double(k) / double(points - 1);
        target[k] = f(xs[k]);
    }

    // The median seed of every width, retrained (runs are deterministic).
    std::vector<FittedNet> fits;
    std::vector<std::int64_t> widths;
    for (const auto& group : runner::seed_groups(plan)) {
        const runner::Run& run = plan.runs[median_run(group, *runs)];
        fits.push_back(fit_width_run(run, make_fit_data(run)));
        widths.push_back(run.integer("model.width"));
    }

    // fits.svg
    std::vector<std::vector<double>> cols = {xs, target};
    for (const auto& fit : fits) {
        cols.emplace_back();
        for (double x : xs) cols.back().push_back(fit.at(x));
    }
    const double y_lo = *std::min_element(target.begin(), target.end());
    const double y_hi = *std::max_element(target.begin(), target.end());
    const std::string fits_svg = (std::filesystem::path(dir) / "fits.svg").string();
    std::string script = header(fits_svg, "fits of " + first.string("target") + " by width (median seed), kinks below");
    script += data_block("curves", cols);
    std::string plots = "plot $curves using 1:2 with lines lw 3 lc rgb 'black' title 'target'";
    for (std::size_t i = 0; i < fits.size(); ++i) {
        std::vector<double> kx, ky;
        for (std::size_t j = 0; j < fits[i].w.size(); ++j) {
            if (fits[i].w[j] == 0) continue;
            const double at = -fits[i].b[j] / fits[i].w[j];
            if (at > data.lo && at < data.hi) {
                kx.push_back(at);
                ky.push_back(y_lo - (y_hi - y_lo) * (0.06 + 0.05 * double(i)));
            }
        }
        plots += fmt::format(", $curves using 1:{} with lines lw 1.5 lc {} title 'm={}'", i + 3, i + 1, widths[i]);
        if (!kx.empty()) {
            script += data_block(fmt::format("kinks{}", i), {kx, ky});
            plots += fmt::format(", $kinks{} using 1:2 with points pt 9 ps 0.6 lc {} notitle", i, i + 1);
        }
    }
    run_gnuplot(script + plots + "\n", fits_svg);

    // ramps.svg: the width-8 fit if there is one, else the middle width.
    std::size_t pick = fits.size() / 2;
    for (std::size_t i = 0; i < widths.size(); ++i)
        if (widths[i] == 8) pick = i;
    const FittedNet& net = fits[pick];
    std::vector<std::vector<double>> ramps = {xs, target, {}};
    for (double x : xs) ramps[2].push_back(net.at(x));
    for (std::size_t j = 0; j < net.w.size(); ++j) {
        ramps.emplace_back();
        for (double x : xs) ramps.back().push_back(net.v[j] * std::max(0.0, net.w[j] * x + net.b[j]));
    }
    const std::string ramps_svg = (std::filesystem::path(dir) / "ramps.svg").string();
    script = header(ramps_svg, fmt::format("the m={} fit as a sum of ramps v_j relu(w_j x + b_j), plus bias {:.3g}",
                                           widths[pick], net.c));
    script += data_block("ramps", ramps);
    plots = "plot $ramps using 1:2 with lines lw 3 lc rgb 'black' title 'target', "
            "$ramps using 1:3 with lines lw 2.5 lc rgb 'red' title 'fit (sum)'";
    for (std::size_t j = 0; j < net.w.size(); ++j)
        plots += fmt::format(", $ramps using 1:{} with lines dt 2 lw 1 title 'unit {}'", j + 4, j + 1);
    run_gnuplot(script + plots + "\n", ramps_svg);
}

}  // namespace ffn::experiments
