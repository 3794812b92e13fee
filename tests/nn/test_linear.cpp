#include <doctest/doctest.h>

#include "nn/linear.h"
#include "nn/mlp.h"

using namespace ffn::nn;

TEST_CASE("Linear computes x W^T + b in PyTorch's layout") {
    Linear<double> layer(3, 2);
    layer.weight = {{1, 2, 3}, {-1, 0, 1}};
    layer.bias = {0.5, -0.5};
    const Matrix<double> X = {{1, 1, 1}, {0, 1, 2}};
    const auto Y = layer.forward(X);
    REQUIRE(Y.shape()[0] == 2);
    CHECK(Y(0, 0) == 6.5);
    CHECK(Y(0, 1) == -0.5);
    CHECK(Y(1, 0) == 8.5);
    CHECK(Y(1, 1) == 1.5);
}

TEST_CASE("parameters are named and counted: d=512 m=2048 has 2dm+m+d") {
    MLP<float> mlp({512, 2048, 512}, Activation::relu);
    auto params = mlp.parameters();
    REQUIRE(params.size() == 4);
    CHECK(params[0].name == "up.weight");
    CHECK(params[3].name == "down.bias");
    CHECK(parameter_count(params) == 2099712);
    GatedMLP<float> gated(768, 2048, Activation::silu);
    CHECK(parameter_count(gated.parameters()) == 4718592);
}

TEST_CASE("a hook sees and can overwrite hidden activations") {
    MLP<double> mlp({1, 2, 1}, Activation::relu);
    mlp.layers[0].weight = {{1}, {-1}};
    mlp.layers[1].weight = {{1, 1}};
    const Matrix<double> X = {{-3}};
    CHECK(mlp.forward(X)(0, 0) == 3.0);  // |x|
    double seen = -1;
    const auto Y = mlp.forward_with_hook(X, [&](std::size_t layer, Matrix<double>& h) {
        CHECK(layer == 0);
        seen = h(0, 1);
        h(0, 1) = 0;
    });
    CHECK(seen == 3.0);
    CHECK(Y(0, 0) == 0.0);
}

TEST_CASE("activations and their derivatives at known points") {
    CHECK(activate(Activation::relu, -1.0) == 0.0);
    CHECK(activate_derivative(Activation::relu, 0.0) == 0.0);  // PyTorch's choice at the kink
    CHECK(activate(Activation::gelu, 1.0) == doctest::Approx(0.8413447460685429).epsilon(1e-15));
    CHECK(activate(Activation::gelu_tanh, 1.0) == doctest::Approx(0.8411919906082768).epsilon(1e-15));
    CHECK(activate(Activation::silu, 1.0) == doctest::Approx(0.7310585786300049).epsilon(1e-15));
    CHECK_THROWS_WITH(parse_activation("rleu"), doctest::Contains("unknown activation 'rleu'"));
    // Derivatives against central differences (h = 1e-6: error ~1e-10 in float64).
    for (Activation a : {Activation::tanh, Activation::gelu, Activation::gelu_tanh, Activation::silu, Activation::sigmoid})
        for (double x : {-2.0, -0.3, 0.7, 3.0}) {
            const double fd = (activate(a, x + 1e-6) - activate(a, x - 1e-6)) / 2e-6;
            CHECK(activate_derivative(a, x) == doctest::Approx(fd).epsilon(1e-8));
        }
}
