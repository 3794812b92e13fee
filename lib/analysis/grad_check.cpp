#include "analysis/grad_check.h"

#include <algorithm>
#include <functional>
#include <cmath>
#include <vector>

#include "core/rng.h"

namespace ffn::analysis {

namespace {

double loss(nn::Module<double>& module, const nn::Matrix<double>& X, const nn::Matrix<double>& R) {
    const auto& Y = module.forward(X);
    double sum = 0;
    for (std::size_t i = 0; i < Y.size(); ++i) sum += Y.data()[i] * R.data()[i];
    return sum;
}

// Compares analytic[i] with the central difference of L in value[i].
void compare(const std::string& name, double* value, const double* analytic, std::size_t size, std::size_t max_count,
             double h, const std::function<double()>& L, GradCheckResult& result) {
    double scale = 0;
    for (std::size_t i = 0; i < size; ++i) scale = std::max(scale, std::fabs(analytic[i]));
    scale = std::max(scale, 1e-12);
    const std::size_t step = std::max<std::size_t>(1, size / max_count);
    for (std::size_t i = 0; i < size; i += step) {
        const double saved = value[i];
        value[i] = saved + h;
        const double up = L();
        value[i] = saved - h;
        const double down = L();
        value[i] = saved;
        const double err = std::fabs((up - down) / (2 * h) - analytic[i]) / scale;
        ++result.checked;
        if (err > result.max_error) {
            result.max_error = err;
            result.worst = name + "[" + std::to_string(i) + "]";
        }
    }
}

}  // namespace

GradCheckResult grad_check(nn::Module<double>& module, const nn::Matrix<double>& X, std::uint64_t seed, double h,
                           std::size_t max_per_tensor) {
    Rng rng(seed);
    nn::Matrix<double> R = nn::Matrix<double>::from_shape({X.shape()[0], module.forward(X).shape()[1]});
    for (auto& r : R) r = rng.uniform(-1, 1);

    module.forward(X);
    const nn::Matrix<double> dX = module.backward(R, true);
    // Copy the analytic gradients before finite differences rerun forward.
    std::vector<std::vector<double>> grads;
    const auto params = module.parameters();
    for (const auto& p : params) grads.emplace_back(p.grad, p.grad + p.size());

    GradCheckResult result;
    nn::Matrix<double> Xp = X;
    auto L = [&] { return loss(module, Xp, R); };
    for (std::size_t k = 0; k < params.size(); ++k)
        compare(params[k].name, params[k].value, grads[k].data(), params[k].size(), max_per_tensor, h, L, result);
    compare("input", Xp.data(), dX.data(), Xp.size(), max_per_tensor, h, L, result);
    return result;
}

}  // namespace ffn::analysis
