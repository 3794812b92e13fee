// collapse_to_linear (analysis/collapse.h): an MLP without its activation is
// one affine map, W_L ... W_1 x + folded bias.
#include <doctest/doctest.h>

#include "analysis/collapse.h"
#include "core/rng.h"
#include "nn/init.h"
#include "nn/tensor.h"

using namespace ffn;
using namespace ffn::nn;

TEST_CASE("an identity-activation MLP of any depth is the one layer collapse_to_linear builds") {
    for (const auto& widths : std::vector<std::vector<std::size_t>>{{6, 9, 4}, {5, 8, 7, 3}, {3, 2, 2, 2, 3}}) {
        MLP<double> mlp(widths, Activation::identity);
        Rng rng(widths.size());
        initialize(mlp, {InitScheme::torch_default}, rng);
        const Linear<double> single = analysis::collapse_to_linear(mlp);
        CHECK(single.in_features() == widths.front());
        CHECK(single.out_features() == widths.back());
        Matrix<double> X = Matrix<double>::from_shape({11, widths.front()});
        for (auto& x : X) x = rng.normal();
        // float64, sums of under 10 terms per layer in another order: within 1e-14 of outputs ~1.
        CHECK(max_abs_difference(mlp.forward(X), nn::apply(single, X)) < 1e-14);
    }
}

TEST_CASE("with its ReLU an MLP is not that affine map") {
    MLP<double> mlp({4, 16, 2}, Activation::relu);
    Rng rng(3);
    initialize(mlp, {InitScheme::torch_default}, rng);
    const Linear<double> single = analysis::collapse_to_linear(mlp);
    Matrix<double> X = Matrix<double>::from_shape({32, 4});
    for (auto& x : X) x = rng.normal();
    CHECK(max_abs_difference(mlp.forward(X), nn::apply(single, X)) > 1e-3);
}
