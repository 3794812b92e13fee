#pragma once
// Piecewise-linear structure of one-dimensional ReLU networks (docs 001,
// 002): a hidden unit z = w x + b kinks at x = -b / w; a width-m network has
// at most m kinks and m + 1 pieces.
#include <cstdint>
#include <limits>
#include <vector>

#include "nn/mlp.h"

namespace ffn::analysis {

// Where the unit z = w x + b switches: -b / w; NaN when w == 0 (it has no
// kink, and every comparison with NaN is false).
inline double kink_at(double w, double b) { return w == 0.0 ? std::numeric_limits<double>::quiet_NaN() : -b / w; }

// Units whose kink lies strictly inside (lo, hi); units with w == 0 have none.
int kinks_inside(const std::vector<double>& w, const std::vector<double>& b, double lo, double hi);

// The same count read off the function instead of its weights: on a uniform
// grid y_k = f(lo + k dx), the places where the slope between neighbouring
// points changes by more than `tolerance` (adjacent changes, one kink
// straddling two intervals, count once). Kinks closer than a grid step, or
// whose slope change is below the tolerance, merge or vanish, so this is at
// most the weight count.
int slope_changes(const std::vector<double>& y, double dx, double tolerance);

// y_k = c + sum_j v_j relu(w_j x_k + b_j) at x_k = lo + k dx, k < points:
// a 1-m-1 ReLU net on a dense grid, each point's units in order, in
// float64 (y is resized).
void relu_net_on_grid(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v, double c,
                      double lo, double dx, std::size_t points, std::vector<double>& y);

// slope_changes(y, dx, tolerance) of that y, the same count, reading the
// grid only near the kinks where it can. Away from every kink the net is
// affine, and a bound on the rounding of y (kinks.cpp) shows the grid's
// slope changes there stay below the tolerance; so only a few points
// around each kink are evaluated, each with the grid's own operations. A
// net whose rounding could reach the tolerance (huge weights, non-finite
// ones) is evaluated on the whole grid.
int relu_net_slope_changes(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v,
                           double c, double lo, double dx, std::size_t points, double tolerance);

// Whether relu_net_slope_changes may read only the points near the kinks:
// the rounding bound holds below the tolerance with room to spare.
bool relu_grid_noise_below(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v,
                           double c, double lo, double dx, std::size_t points, double tolerance);

// The smallest root-mean-square error over the samples (x sorted) of any
// function made of `pieces` linear pieces, not required to join: the exact
// optimum by dynamic programming over where the pieces break. A continuous
// piecewise-linear function with pieces - 1 kinks (a width pieces - 1 ReLU
// net) is a special case, so this bounds such a net's RMSE from below.
double piecewise_linear_lower_bound(const std::vector<double>& x, const std::vector<double>& y, int pieces);

// The linear pieces of a ReLU MLP of any depth with one input and one
// output on [lo, hi], its breakpoints walked layer by layer (float64; the
// tolerance is stated in kinks.cpp). Throws for another kind of net.
std::int64_t linear_pieces(const nn::MLP<double>& net, double lo, double hi);

}  // namespace ffn::analysis
