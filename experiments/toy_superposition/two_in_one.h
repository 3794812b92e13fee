#pragma once
// Two features in one dimension, solved without training: the exact
// expected loss of the toy model x' = ReLU(w^T w x + b) (w = (w0, w1), one
// hidden dimension) as a function of its four parameters, and its least
// value within each phase's region of weights, the regions being the ones
// the trained models are classified by (a feature is represented when
// |w_i| > 0.5). The phase of least loss is what an ideal trainer would
// find; the trained phase diagram is set beside it.
//
// Each feature is 0 with probability S and uniform on [0, 1) otherwise;
// the loss is (I_0 E[e_0^2] + I_1 E[e_1^2]) / 2, as training's. For one
// feature's error, the expectation over the other feature is done in
// closed form (the error is piecewise quadratic in it), the remaining one
// exactly too, by three Gauss-Legendre nodes on each piece between the
// kinks (the result is piecewise cubic in the feature's own value), and
// the least value within a region by Nelder and Mead's simplex from
// several starts. Nothing is fitted to trained runs.
#include <array>
#include <string>

namespace ffn::experiments::toy_superposition {

struct TwoInOne {
    // Least loss within each phase's region: feature 0 dedicated (|w0| >
    // 0.5 >= |w1|), feature 1 dedicated, antipodal (both > 0.5, opposite
    // signs), both on the same side.
    double dedicated0 = 0, dedicated1 = 0, antipodal = 0, same_side = 0;
    std::string phase;  // the region of least loss, named as phase_of names it
    double loss = 0;    // its loss
};

// For feature 1's importance `importance1` (feature 0's is 1) and sparsity S.
TwoInOne two_in_one_optimum(double importance1, double sparsity);

// The exact expected loss at w = (w0, w1), b = (b0, b1).
double two_in_one_loss(const std::array<double, 4>& w0_w1_b0_b1, double importance1, double sparsity);

}  // namespace ffn::experiments::toy_superposition
