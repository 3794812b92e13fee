// mlp_jacobian (analysis/jacobian.h) against doc 000's formula written out
// by hand, and against central differences for a smooth activation.
#include <doctest/doctest.h>

#include <cmath>

#include "analysis/jacobian.h"
#include "core/rng.h"
#include "nn/init.h"
#include "nn/tensor.h"

using namespace ffn;
using namespace ffn::nn;

namespace {
MLP<double> random_mlp(const std::vector<std::size_t>& widths, Activation act, std::uint64_t seed) {
    MLP<double> mlp(widths, act);
    Rng rng(seed);
    initialize(mlp, {InitScheme::normal, 0.7}, rng);
    for (auto& layer : mlp.layers)
        for (auto& b : layer.bias) b = rng.normal(0, 0.5);
    return mlp;
}
}  // namespace

TEST_CASE("the Jacobian of a ReLU block is W_down diag(1[W_up x + b > 0]) W_up") {
    MLP<double> mlp = random_mlp({5, 7, 3}, Activation::relu, 11);
    const Vector<double> x = to_vector<double>({0.3, -1.2, 0.8, 0.05, -0.4});
    const Matrix<double> J = analysis::mlp_jacobian(mlp, x);
    REQUIRE(J.shape()[0] == 3);
    REQUIRE(J.shape()[1] == 5);
    const auto& up = mlp.layers[0];
    const auto& down = mlp.layers[1];
    int active = 0;
    for (std::size_t o = 0; o < 3; ++o)
        for (std::size_t i = 0; i < 5; ++i) {
            double expected = 0;
            for (std::size_t j = 0; j < 7; ++j) {
                double z = up.bias(j);
                for (std::size_t k = 0; k < 5; ++k) z += up.weight(j, k) * x(k);
                if (z > 0) expected += down.weight(o, j) * up.weight(j, i);
                if (o == 0 && i == 0) active += z > 0;
            }
            // float64 sums of 7 products in another order: a few units of 1e-16.
            CHECK(J(o, i) == doctest::Approx(expected).epsilon(1e-13).scale(1));
        }
    CHECK(active > 0);  // the point is not in a dead region
    CHECK(active < 7);  // nor in the all-active one, where any mask passes
}

TEST_CASE("the Jacobian of a deeper GELU net matches central differences") {
    MLP<double> mlp = random_mlp({4, 6, 5, 2}, Activation::gelu, 12);
    const Vector<double> x = to_vector<double>({0.2, -0.7, 1.1, -0.3});
    const Matrix<double> J = analysis::mlp_jacobian(mlp, x);
    // h = 1e-5: truncation ~h^2 |f'''| ~ 1e-10, roundoff ~1e-16 / h ~ 1e-11.
    const double h = 1e-5;
    for (std::size_t i = 0; i < 4; ++i) {
        Vector<double> plus = x, minus = x;
        plus(i) += h;
        minus(i) -= h;
        const Matrix<double> f_plus = mlp.forward(as_row(plus));
        const Matrix<double> f_minus = mlp.forward(as_row(minus));
        for (std::size_t o = 0; o < 2; ++o)
            CHECK(J(o, i) == doctest::Approx((f_plus(0, o) - f_minus(0, o)) / (2 * h)).epsilon(1e-8).scale(1));
    }
}
