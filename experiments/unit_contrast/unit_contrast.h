#pragma once
// Pieces of unit_contrast shared with its figure.
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"
#include "runner/experiment.h"

namespace ffn::experiments::unit_contrast {

// A run's tables as the sweep computes them, and a third, `units`: every
// unit's standardised contrast on the discovery and the held-out inputs,
// its rank when chosen, whether it survived, whether it reads the feature
// most (planted models). The runs are deterministic, so a figure can
// recompute one run rather than keep every unit of every run in the tables.
std::vector<report::Table> run_with_every_unit(const runner::Run& run);

// `sweep --plot DIR`: DIR/contrasts.svg (and .png), a panel per swept point
// (the random-group null beside the feature groups): every unit of one seed
// (choice.seed, else the first), its held-out contrast against its
// discovery contrast, the winners and the survivors marked.
void plot_contrast(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir,
                   const runner::PlotChoice& choice);

}  // namespace ffn::experiments::unit_contrast
