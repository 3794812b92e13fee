#pragma once
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"

namespace ffn::experiments::width_sweep {

// `sweep --plot DIR` for the width sweep, rendered by gnuplot as SVG:
//   DIR/fits.svg   the target and, per width, the fit of its median seed
//                  (retrained: runs are deterministic), kinks marked on the
//                  x axis;
//   DIR/ramps.svg  one fit as the sum of its units' ramps
//                  v_j relu(w_j x + b_j) (seed 002's picture).
// Throws ffn::Error when gnuplot is missing or fails.
void plot_width_sweep(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir);

}  // namespace ffn::experiments::width_sweep
