#pragma once
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"
#include "runner/experiment.h"

namespace ffn::experiments::toy_superposition {

// `sweep --plot DIR` for the toy models, rendered by gnuplot as SVG and PNG:
//   DIR/columns.svg        for m = 2, the columns W_i of one seed (choice.seed,
//                          else the first) in the plane, a panel per point;
//   DIR/norms.svg          for m > 2 and n <= 64, the length of each column,
//                          coloured by how much the other columns share it;
//   DIR/phase_diagram.svg  for two features in one dimension swept over
//                          importance and sparsity: the phase of least exact
//                          loss filled over the swept range, its boundaries,
//                          and each point's trained phase on top;
//   DIR/dimensionality.svg each feature's D_i against 1 / (1 - S), with D*
//                          and the fractions the paper names.
// Throws ffn::Error when gnuplot is missing or fails.
void plot_toy(const runner::Plan& plan, const std::vector<report::Table>& tables, const std::string& dir,
              const runner::PlotChoice& choice);

}  // namespace ffn::experiments::toy_superposition
