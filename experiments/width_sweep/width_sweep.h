#pragma once
// Pieces of the width sweep shared with its plots.
#include <string>
#include <vector>

#include "runner/experiment.h"

namespace ffn::experiments::width_sweep {

struct FitData {
    std::vector<double> x, y;
    double lo = 0, hi = 0;
};

// A trained (or loaded) 1-m-1 ReLU net: y = c + sum_j v_j relu(w_j x + b_j).
struct FittedNet {
    std::vector<double> w, b, v;
    double c = 0;
    double rmse = 0;
    long steps = 0;
    std::string status;
    double at(double x) const;  // evaluated in float64
};

FitData make_fit_data(const runner::Run& run);
FittedNet fit_width_run(const runner::Run& run, const FitData& data);
runner::ExperimentKind make();

}  // namespace ffn::experiments::width_sweep
