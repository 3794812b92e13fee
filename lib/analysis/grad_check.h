#pragma once
// Finite-difference check of a module's backward pass, in float64. The loss
// is L(Y) = sum(Y * R) for a fixed random R (so dL/dY = R); each analytic
// gradient entry is compared with the central difference
// (L(p + h) - L(p - h)) / 2h. Errors are normwise: |analytic - numeric|
// divided by the largest |analytic| of the same tensor, so entries near zero
// are judged on the tensor's scale (finite-difference roundoff is about
// eps * |L| / h, absolute).
#include <cstdint>
#include <string>

#include "nn/module.h"

namespace ffn::analysis {

struct GradCheckResult {
    double max_error = 0.0;  // normwise, as above
    std::string worst;       // "up.weight[3]" or "input[7]"
    std::size_t checked = 0;
};

// Checks up to `max_per_tensor` entries of every parameter (spread evenly)
// and of the input.
GradCheckResult grad_check(nn::Module<double>& module, const nn::Matrix<double>& X, std::uint64_t seed,
                           double h = 1e-6, std::size_t max_per_tensor = 48);

}  // namespace ffn::analysis
