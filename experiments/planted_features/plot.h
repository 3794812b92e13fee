#pragma once
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"
#include "runner/experiment.h"

namespace ffn::experiments::planted_features {

// `sweep --plot DIR`: DIR/init_vs_trained.svg (and .png), a panel per
// metric (firing, selectivity, features per unit, alignment), and in each,
// per swept point, the distribution over every unit of the seeds whose
// model learned the task, at init and trained side by side: the box from
// the 25th to the 75th percentile, whiskers at the 10th and 90th (the
// table's), a bar at the median. Throws ffn::Error when gnuplot fails.
void plot_planted(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir,
                  const runner::PlotChoice& choice);

}  // namespace ffn::experiments::planted_features
