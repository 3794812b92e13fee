#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.h"
#include "core/thread_pool.h"
#include "experiments/support/plot.h"
#include "experiments/unit_contrast/unit_contrast.h"

namespace ffn::experiments::unit_contrast {

void plot_contrast(const runner::Plan& plan, const std::vector<report::Table>&, const std::string& dir,
                   const runner::PlotChoice& choice) {
    std::filesystem::create_directories(dir);
    const std::uint64_t drawn = choice.seed ? *choice.seed : plan.seeds.front();  // sweep refused a seed it does not run
    std::vector<const runner::Run*> runs;  // one per point, in grid order
    for (const auto& run : plan.runs)
        if (run.seed == drawn) runs.push_back(&run);
    // Each point's run again, with every unit's contrasts: a training and
    // three permutation tests each, spread over the cores.
    std::vector<std::vector<report::Table>> computed(runs.size());
    ThreadPool pool;
    pool.parallel_for(runs.size(), [&](std::size_t i) { computed[i] = run_with_every_unit(*runs[i]); });

    const std::size_t across = std::min<std::size_t>(4, runs.size()), down = (runs.size() + across - 1) / across;
    std::string swept;
    for (const auto& key : plan.swept_keys)
        if (key != "seed") swept += (swept.empty() ? "" : ", ") + key;
    // The panels leave the bottom strip to the key, which sits on no data.
    // Two lines (a double-quoted gnuplot string reads \n): on one, the title
    // ran past both edges. Key names and a seed hold no quote to escape.
    std::string body = fmt::format("set multiplot layout {},{} margins 0.06,0.98,0.12,0.86 spacing 0.07,0.1 title \"{}\\n{}\"\n", down,
                                   across,
                                   plot::plain_title(fmt::format("every unit of seed {}: held-out contrast (y) against discovery contrast (x)", drawn)),
                                   plot::plain_title("panels by " + swept)) +
                       "set size square\nunset xlabel\nunset ylabel\n"
                       "unset key\n";
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::string label;
        for (const auto& [key, value] : runs[i]->swept())
            if (key != "seed") label += (label.empty() ? "" : " ") + (value.is_string() ? value.get<std::string>() : value.dump());
        body += "set title '" + plot::plain_title(label) + "'\n";
        const report::Table& units = computed[i].back();
        if (units.name() != "units" || units.row_count() == 0) {
            body += "set label 1 'the model did not learn the task' at graph 0.5, graph 0.5 center\nplot NaN notitle\nunset label 1\n";
            continue;
        }
        std::vector<std::vector<double>> all(2), survived(2), failed(2), reads(2);
        const std::vector<double> x = plot::numbers(units, "contrast_discovery"), y = plot::numbers(units, "contrast_held_out");
        for (std::size_t r = 0; r < units.row_count(); ++r) {
            all[0].push_back(x[r]), all[1].push_back(y[r]);
            if (units.at(r, "reads_feature") == report::Cell{true}) reads[0].push_back(x[r]), reads[1].push_back(y[r]);
            if (units.at(r, "survived") == report::Cell{true}) survived[0].push_back(x[r]), survived[1].push_back(y[r]);
            else if (units.at(r, "survived") == report::Cell{false}) failed[0].push_back(x[r]), failed[1].push_back(y[r]);
        }
        // The same symmetric range on both axes, so that the diagonal (held
        // out = discovery) reads as no shrinkage and 0 as none left.
        double reach = 0;
        for (const auto& v : {x, y})
            for (const double c : v)
                if (std::isfinite(c)) reach = std::max(reach, std::fabs(c));
        const double step = plot::nice_step(reach / 2), edge = reach * 1.1 + 1e-12;
        body += fmt::format("set xrange [{0:.9g}:{1:.9g}]\nset yrange [{0:.9g}:{1:.9g}]\nset xtics {2:.9g}\nset ytics {2:.9g}\n", -edge, edge,
                            step);
        std::string plots = "plot x with lines dt 2 lc rgb '#AAAAAA' notitle, 0 with lines lc rgb '#AAAAAA' notitle";
        const auto add = [&](const std::string& name, const std::vector<std::vector<double>>& cols, const std::string& style) {
            if (cols[0].empty()) return;
            body += plot::data_block(fmt::format("{}{}", name, i), cols);
            plots += fmt::format(", ${}{} using 1:2 with points {} notitle", name, i, style);
        };
        const std::string unit = "pt 7 ps 0.5 lc rgb '#999999'", reads_style = "pt 6 ps 1.4 lw 1.5 lc rgb 'black'",
                          failed_style = "pt 6 ps 2 lw 2.5 lc rgb '#D55E00'", survived_style = "pt 7 ps 1.6 lc rgb '#009E73'";
        add("all", all, unit);
        add("reads", reads, reads_style);
        add("failed", failed, failed_style);
        add("survived", survived, survived_style);
        body += plots + "\n";
        // The key, once, in the strip below the panels: labels with their
        // marker (gnuplot sizes a panel's own key to the panel, one column).
        if (i == 0) {
            // Each label takes its marker and text: about 0.0085 of the width a
            // character at the PNG's font.
            double at = 0.08;
            for (const auto& [style, text] : {std::pair{unit, std::string("a unit")}, std::pair{reads_style, std::string("reads the feature most")},
                                              std::pair{failed_style, std::string("winner, not confirmed")},
                                              std::pair{survived_style, std::string("winner, confirmed held out")}}) {
                body += fmt::format("set label '{}' at screen {:.3g}, screen 0.035 left point {} offset 1.5, 0\n", text, at, style);
                at += static_cast<double>(text.size() + 7) * 0.0085;
            }
        }
    }
    plot::render(plot::header("", "", "") + body + "unset multiplot\n", (std::filesystem::path(dir) / "contrasts.svg").string());
}

}  // namespace ffn::experiments::unit_contrast
