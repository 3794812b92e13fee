// Every layer kind and every activation: analytic gradients of the input and
// of every parameter against central finite differences, in float64, on odd
// sizes. Bound 1e-6 normwise (see analysis/grad_check.h); h = 1e-6 gives
// truncation error ~1e-12 and roundoff ~1e-9 relative to |L| ~ 10.
#include <doctest/doctest.h>

#include <memory>

#include "analysis/grad_check.h"
#include "core/rng.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "nn/norm.h"
#include "nn/residual.h"
#include "train/loss.h"
#include "train/optimizer.h"

using namespace ffn;
using namespace ffn::nn;

namespace {

Matrix<double> random_batch(std::size_t rows, std::size_t cols, std::uint64_t seed) {
    Rng rng(seed);
    Matrix<double> X = Matrix<double>::from_shape({rows, cols});
    for (auto& x : X) x = rng.uniform(-1.5, 1.5);
    return X;
}

void randomize(Module<double>& m, std::uint64_t seed) {
    Rng rng(seed);
    // Norm scales and shifts too, so their gradients are not trivially tested.
    for (const auto& p : m.parameters())
        for (std::size_t i = 0; i < p.size(); ++i) p.value[i] = rng.uniform(-0.8, 0.8) + (p.shape.size() == 1 ? 0.5 : 0.0);
}

void expect_gradients_match(Module<double>& m, std::size_t d, std::uint64_t seed) {
    randomize(m, seed);
    const auto result = analysis::grad_check(m, random_batch(5, d, seed + 1), seed + 2);
    CAPTURE(result.worst);
    CHECK(result.checked > 0);
    CHECK(result.max_error < 1e-6);
}

const Activation kAll[] = {Activation::relu,    Activation::tanh,    Activation::gelu,    Activation::gelu_tanh,
                           Activation::silu,    Activation::sigmoid, Activation::identity};

}  // namespace

TEST_CASE("grad check: Linear with and without bias") {
    Linear<double> with(7, 3, true), without(7, 3, false);
    expect_gradients_match(with, 7, 1);
    expect_gradients_match(without, 7, 2);
}

TEST_CASE("grad check: MLP of depth 2 and 3 for every activation") {
    for (Activation a : kAll) {
        CAPTURE(to_string(a));
        MLP<double> two({5, 7, 3}, a), three({5, 9, 6, 5}, a, false);
        expect_gradients_match(two, 5, 10);
        expect_gradients_match(three, 5, 11);
    }
}

TEST_CASE("grad check: GatedMLP for every GLU variant") {
    for (const auto& variant : gated_variant_names()) {
        CAPTURE(variant);
        GatedMLP<double> g(5, 7, gated_variant_activation(variant), /*bias=*/true);
        expect_gradients_match(g, 5, 20);
    }
}

TEST_CASE("grad check: BilinearMLP of rank 1 and 3 for every activation") {
    for (Activation a : kAll) {
        CAPTURE(to_string(a));
        BilinearMLP<double> r1(5, 7, 1, a), r3(5, 6, 3, a, true);
        expect_gradients_match(r1, 5, 30);
        expect_gradients_match(r3, 5, 31);
    }
}

TEST_CASE("grad check: LayerNorm and RMSNorm") {
    LayerNorm<double> ln(7);
    RMSNorm<double> rms(7);
    expect_gradients_match(ln, 7, 40);
    expect_gradients_match(rms, 7, 41);
}

TEST_CASE("grad check: pre-norm residual blocks around each feed-forward kind") {
    PreNormResidual<double> mlp_block(std::make_unique<LayerNorm<double>>(6),
                                      std::make_unique<MLP<double>>(std::vector<std::size_t>{6, 11, 6}, Activation::gelu));
    PreNormResidual<double> gated_block(std::make_unique<RMSNorm<double>>(6),
                                        std::make_unique<GatedMLP<double>>(6, 9, Activation::silu));
    PreNormResidual<double> bare_block(nullptr, std::make_unique<BilinearMLP<double>>(6, 5, 2, Activation::relu));
    expect_gradients_match(mlp_block, 6, 50);
    expect_gradients_match(gated_block, 6, 51);
    expect_gradients_match(bare_block, 6, 52);
}

TEST_CASE("grad check after optimizer steps: gradients stay right away from the initialisation") {
    // Three Adam steps on a random regression problem move every parameter
    // (biases and norm scales included) away from its initial value first.
    auto train_then_check = [](Module<double>& m, std::size_t d, std::uint64_t seed) {
        randomize(m, seed);
        const Matrix<double> X = random_batch(7, d, seed + 1), Y = random_batch(7, d, seed + 2);
        train::Optimizer<double> opt(m.parameters(), {ffn::train::OptimizerKind::adam, 0.05});
        Matrix<double> grad;
        for (int step = 0; step < 3; ++step) {
            train::mse_loss(m.forward(X), Y, grad);
            m.backward(grad, false);
            opt.step();
        }
        const auto result = analysis::grad_check(m, random_batch(5, d, seed + 3), seed + 4);
        CAPTURE(result.worst);
        CHECK(result.max_error < 1e-6);
    };
    MLP<double> mlp({5, 9, 5}, Activation::gelu);
    GatedMLP<double> gated(5, 7, Activation::silu, true);
    BilinearMLP<double> bilinear(5, 6, 2, Activation::tanh, true);
    PreNormResidual<double> block(std::make_unique<LayerNorm<double>>(5),
                                  std::make_unique<MLP<double>>(std::vector<std::size_t>{5, 8, 5}, Activation::relu));
    train_then_check(mlp, 5, 60);
    train_then_check(gated, 5, 61);
    train_then_check(bilinear, 5, 62);
    train_then_check(block, 5, 63);
}
