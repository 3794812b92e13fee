#include "experiments/planted_features/plot.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "core/stats.h"
#include "experiments/support/plot.h"

namespace ffn::experiments::planted_features {

void plot_planted(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir,
                  const runner::PlotChoice&) {
    std::filesystem::create_directories(dir);
    const report::Table& units = plot::find_table(tables, "units", "planted_features");
    const report::Table& runs = plot::find_table(tables, "runs", "planted_features");
    // As the table: only the seeds whose model learned the task.
    std::set<std::pair<std::string, double>> learned;  // (point, seed)
    const std::vector<double> run_seed = plot::numbers(runs, "seed");
    for (std::size_t r = 0; r < runs.row_count(); ++r)
        if (runs.at(r, "learned") == report::Cell{true}) learned.insert({plot::point_label(plan, runs, r), run_seed[r]});
    std::vector<std::string> points, ticks;  // in the table's order
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> values;  // (point, stage) -> metric -> units
    const std::vector<double> seed = plot::numbers(units, "seed");
    const std::vector<std::string> metrics = {"firing", "selectivity", "features_per_unit", "alignment"};
    for (std::size_t r = 0; r < units.row_count(); ++r) {
        const std::string point = plot::point_label(plan, units, r);
        if (std::find(points.begin(), points.end(), point) == points.end())
            points.push_back(point), ticks.push_back(plot::point_label(plan, units, r, false));
        if (!learned.count({point, seed[r]})) continue;
        const std::string stage = std::get<std::string>(units.at(r, "stage"));
        for (const auto& metric : metrics)
            if (const auto v = report::as_number(units.at(r, metric))) values[{point, stage}][metric].push_back(*v);
    }
    std::string xtics;
    for (std::size_t p = 0; p < points.size(); ++p)
        xtics += fmt::format("{}'{}' {}", p ? ", " : "", plot::plain_title(ticks[p].empty() ? "all seeds" : ticks[p]), p);
    std::string swept;
    for (const auto& key : plan.swept_keys)
        if (key != "seed") swept += (swept.empty() ? "" : ", ") + key;
    std::string body = "set multiplot layout 2,2 title 'every unit, at init (grey) and trained (blue), of the seeds that learned: "
                       "box 25-75%, whiskers 10-90%'\n"
                       "unset key\nset style fill solid 0.5 border -1\nset boxwidth 0.3\nset grid noxtics\n" +
                       fmt::format("set xrange [-0.6:{}]\nset xtics ({}) rotate by 30 right\nset lmargin 7\nset rmargin 2\nset label 1 '{}' at screen 0.5, screen 0.015 center\n",
                                   points.size() - 0.4, xtics, plot::plain_title("points: " + swept));
    const std::map<std::string, std::string> titles = {{"firing", "firing: share of inputs that turn the unit on"},
                                                       {"selectivity", "selectivity: its strongest feature's share"},
                                                       {"features_per_unit", "features per unit"},
                                                       {"alignment", "alignment: max |cos(w, f_i)|"}};
    for (const auto& metric : metrics) {
        std::string plots;
        for (int s = 0; s < 2; ++s) {
            std::vector<std::vector<double>> box(6);  // x, q25, q10, q90, q75, median
            for (std::size_t p = 0; p < points.size(); ++p) {
                const auto found = values.find({points[p], s == 0 ? "init" : "trained"});
                if (found == values.end() || found->second[metric].empty()) continue;
                const std::vector<double>& v = found->second[metric];
                box[0].push_back(static_cast<double>(p) + (s == 0 ? -0.18 : 0.18));
                for (std::size_t c = 1; const double q : {25.0, 10.0, 90.0, 75.0, 50.0}) box[c++].push_back(percentile(v, q));
            }
            if (box[0].empty()) continue;
            const std::string name = fmt::format("{}{}", metric, s);
            body += plot::data_block(name, box);
            const char* colour = s == 0 ? "#999999" : "#0072B2";
            plots += fmt::format("{}${} using 1:2:3:4:5 with candlesticks whiskerbars 0.5 lc rgb '{}' lw 1.5, "
                                 "${} using 1:6:6:6:6 with candlesticks lc rgb 'black' lw 2.5",
                                 plots.empty() ? "plot " : ", ", name, colour, name);
        }
        if (plots.empty()) continue;
        // Shares run from 0 to 1; a count from 0 to its largest.
        body += "set title '" + plot::plain_title(titles.at(metric)) + "'\n" +
                (metric == "features_per_unit" ? "set yrange [0:*]\nset ytics 5\n" : "set yrange [0:1.04]\nset ytics 0.25\n") + plots + "\n";
    }
    plot::render(plot::header("", "", "") + body + "unset multiplot\n", (std::filesystem::path(dir) / "init_vs_trained.svg").string());
}

}  // namespace ffn::experiments::planted_features
