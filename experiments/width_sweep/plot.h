#pragma once
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"
#include "runner/experiment.h"

namespace ffn::experiments::width_sweep {

// `sweep --plot DIR` for the width sweep, rendered by gnuplot as SVG and PNG:
//   DIR/fits.svg   the target and, per width, the fit of its median seed
//                  or of choice.seed (retrained: runs are deterministic),
//                  its kinks in a row of their own below;
//   DIR/ramps.svg  one fit (width choice.width, else 8, else the middle
//                  one) as the sum of its units' contributions
//                  v_j act(w_j x + b_j) (doc 002's picture);
//   DIR/rmse.svg   RMSE against width: every seed, the median, the
//                  document's values and the PWL bound (claim S2);
//   DIR/curves.svg the training curves, when the runs logged them.
// Throws ffn::Error when gnuplot is missing or fails.
void plot_width_sweep(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir,
                      const runner::PlotChoice& choice);

}  // namespace ffn::experiments::width_sweep
