#pragma once
// Pieces of the width sweep shared with its plots.
#include <functional>
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

// The training points: the target expression at `samples` evenly spaced
// x on the interval, or, with target "points", the config's own points.
FitData make_fit_data(const runner::Run& run);
// The target as a curve to draw at any x: the expression (NaN where it has
// no value), or for target "points" the straight lines between the points
// (NaN outside them).
std::function<double(double)> target_curve(const runner::Run& run, const FitData& data);
// Trains (or loads) the nets of runs that differ only in their seed, all at
// once; each gets what it would get alone.
std::vector<FittedNet> fit_width_runs(std::span<const runner::Run> runs, const FitData& data);
// One run trained as `sweep` trains it (its init, data, optimizer, steps
// and bits), watched: first at step 0 (the initial net, loss NaN), then
// after each step's update `watch` gets the step, the loss before it, and the net of that moment when it asks for it (net()
// evaluates its RMSE, so ask only for what is shown). Returning false ends
// the training there. Returns the net as training left it.
using Watch = std::function<bool(long step, double loss, const std::function<FittedNet()>& net)>;
FittedNet fit_watched(const runner::Run& run, const FitData& data, const Watch& watch);

runner::ExperimentKind make();

}  // namespace ffn::experiments::width_sweep
