#include "experiments/width_sweep/plot.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <filesystem>
#include <fmt/format.h>

#include "analysis/kinks.h"
#include "core/error.h"
#include "io/atomic_file.h"
#include "experiments/width_sweep/target.h"
#include "experiments/width_sweep/width_sweep.h"
#include "runner/experiment.h"

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

// Renders a gnuplot script into `output`. Nothing the user typed reaches
// gnuplot as a command: gnuplot writes into a private folder whose name we
// made, the figure then moves to `output` as every ffn-lab file does (whole
// or not at all, a full disk an error), and titles pass through
// plain_title. `body` is the script after the terminal and output lines.
void render(const std::string& body, const std::string& output) {
    std::string folder = (std::filesystem::temp_directory_path() / "ffnlab-plot-XXXXXX").string();
    if (!::mkdtemp(folder.data())) throw Error("--plot: cannot make a temporary folder for gnuplot");
    struct Cleanup {
        std::string path;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    } cleanup{folder};
    const std::string figure = folder + "/figure.svg";
    const std::string script = "set terminal svg size 960,600 dynamic background rgb 'white' noenhanced\nset output '" +
                               figure + "'\n" + body + "unset output\n";
    FILE* pipe = ::popen("gnuplot", "w");
    if (!pipe) throw Error("--plot: cannot start gnuplot (apt-get install gnuplot-nox)");
    std::fwrite(script.data(), 1, script.size(), pipe);
    const int status = ::pclose(pipe);
    if (status != 0 || !std::filesystem::exists(figure))
        throw Error(fmt::format("--plot: gnuplot failed to draw {} (status {}; apt-get install gnuplot-nox)", output, status));
    io::write_file_atomically(output, io::read_file(figure));
}

// A title gnuplot shows as it is: only characters that no gnuplot syntax
// gives a meaning inside a quoted string (no quote, backquote, @, $, \ or
// control character); any other becomes '?'.
std::string plain_title(const std::string& text) {
    std::string out;
    for (const char c : text)
        out += std::isalnum(static_cast<unsigned char>(c)) || std::string_view(" +-*/^().,=_<>!|&%:;[]{}~#").find(c) != std::string_view::npos
                   ? c
                   : '?';
    return out;
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

std::string header(const std::string& title) {
    return "set title '" + plain_title(title) + "'\nset xlabel 'x'\nset ylabel 'y'\nset key outside right\nset grid\n";
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
        fits.push_back(fit_width_runs(std::span(&run, 1), make_fit_data(run)).front());
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
    std::string script = header("fits of " + first.string("target") + " by width (median seed), kinks below");
    script += data_block("curves", cols);
    std::string plots = "plot $curves using 1:2 with lines lw 3 lc rgb 'black' title 'target'";
    for (std::size_t i = 0; i < fits.size(); ++i) {
        std::vector<double> kx, ky;
        for (std::size_t j = 0; j < fits[i].w.size() && nn::is_piecewise_linear(fits[i].activation); ++j) {
            const double at = analysis::kink_at(fits[i].w[j], fits[i].b[j]);
            if (at > data.lo && at < data.hi) {
                kx.push_back(at);
                ky.push_back(y_lo - (y_hi - y_lo) * (0.06 + 0.05 * double(i)));
            }
        }
        // The activation in the title only when the plot holds several.
        const bool mixed = std::any_of(fits.begin(), fits.end(), [&](const FittedNet& f) { return f.activation != fits[0].activation; });
        const std::string label = mixed ? fmt::format("{} m={}", nn::to_string(fits[i].activation), widths[i])
                                        : fmt::format("m={}", widths[i]);
        plots += fmt::format(", $curves using 1:{} with lines lw 1.5 lc {} title '{}'", i + 3, i + 1, label);
        if (!kx.empty()) {
            script += data_block(fmt::format("kinks{}", i), {kx, ky});
            plots += fmt::format(", $kinks{} using 1:2 with points pt 9 ps 0.6 lc {} notitle", i, i + 1);
        }
    }
    render(script + plots + "\n", fits_svg);

    // ramps.svg: the width-8 fit if there is one, else the middle width.
    std::size_t pick = fits.size() / 2;
    for (std::size_t i = 0; i < widths.size(); ++i)
        if (widths[i] == 8) pick = i;
    const FittedNet& net = fits[pick];
    std::vector<std::vector<double>> ramps = {xs, target, {}};
    for (double x : xs) ramps[2].push_back(net.at(x));
    for (std::size_t j = 0; j < net.w.size(); ++j) {
        ramps.emplace_back();
        for (double x : xs) ramps.back().push_back(net.unit(j, x));
    }
    const std::string ramps_svg = (std::filesystem::path(dir) / "ramps.svg").string();
    script = header(fmt::format("the m={} {} fit as a sum of its units' contributions v_j {}(w_j x + b_j), plus bias {:.3g}",
                                widths[pick], nn::to_string(net.activation), nn::to_string(net.activation), net.c));
    script += data_block("ramps", ramps);
    plots = "plot $ramps using 1:2 with lines lw 3 lc rgb 'black' title 'target', "
            "$ramps using 1:3 with lines lw 2.5 lc rgb 'red' title 'fit (sum)'";
    for (std::size_t j = 0; j < net.w.size(); ++j)
        plots += fmt::format(", $ramps using 1:{} with lines dt 2 lw 1 title 'unit {}'", j + 4, j + 1);
    render(script + plots + "\n", ramps_svg);
}

}  // namespace ffn::experiments::width_sweep
