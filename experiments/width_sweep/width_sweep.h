#pragma once
// Pieces of the width sweep shared with its plots.
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "nn/activation.h"
#include "runner/experiment.h"

namespace ffn::experiments::width_sweep {

struct FitData {
    std::vector<double> x, y;
    double lo = 0, hi = 0;
};

// A trained (or loaded) 1-m-1 net: y = c + sum_j v_j act(w_j x + b_j).
struct FittedNet {
    std::vector<double> w, b, v;
    double c = 0;
    nn::Activation activation = nn::Activation::relu;
    double rmse = 0;
    long steps = 0;
    std::string status;
    std::vector<std::pair<long, double>> curve;  // (step, MSE of the step) every log_every steps
    double at(double x) const;              // evaluated in float64
    double unit(std::size_t j, double x) const;  // unit j's part of at(x): v_j act(w_j x + b_j)
};

FitData make_fit_data(const runner::Run& run);
// Trains (or loads) the nets of runs that differ only in their seed, all at
// once; each gets what it would get alone.
std::vector<FittedNet> fit_width_runs(std::span<const runner::Run> runs, const FitData& data);
runner::ExperimentKind make();

}  // namespace ffn::experiments::width_sweep
