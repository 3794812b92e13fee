#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <numbers>

#include "core/rng.h"
#include "gemm/gemm.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "train/fit.h"
#include "train/loss.h"

using namespace ffn;
using namespace ffn::nn;
using namespace ffn::train;

namespace {
template <class T>
Matrix<T> grid(std::size_t n, double lo, double hi) {
    Matrix<T> X = Matrix<T>::from_shape({n, std::size_t{1}});
    for (std::size_t i = 0; i < n; ++i) X(i, 0) = static_cast<T>(lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(n - 1));
    return X;
}
}  // namespace

TEST_CASE("the MSE loss: value and gradient") {
    Matrix<double> y = {{1.0, 2.0}}, t = {{0.0, 4.0}}, g;
    CHECK(mse_loss(y, t, g) == 2.5);  // (1 + 4) / 2
    CHECK(g(0, 0) == 1.0);            // 2 * (1 - 0) / 2
    CHECK(g(0, 1) == -2.0);
}

TEST_CASE("a 1-8-1 ReLU net fits |x| on [-1 1] to MSE below 1e-6 from the exact construction") {
    // Units 1, 2 hold doc 000's construction relu(x) + relu(-x); the others
    // start as kinks spread over the interval with small output weights, so
    // training has to keep the construction and silence the rest.
    MLP<double> net({1, 8, 1}, Activation::relu);
    net.layers[0].weight(0, 0) = 1;
    net.layers[0].weight(1, 0) = -1;
    net.layers[1].weight(0, 0) = 1;
    net.layers[1].weight(0, 1) = 1;
    Rng rng(8);
    for (std::size_t j = 2; j < 8; ++j) {
        const double c = rng.uniform(-1, 1);
        net.layers[0].weight(j, 0) = 1;
        net.layers[0].bias(j) = -c;
        net.layers[1].weight(0, j) = rng.uniform(-0.1, 0.1);
    }
    const auto X = grid<double>(201, -1, 1);
    Matrix<double> Y = xt::abs(X);
    Optimizer<double> opt(net.parameters(), {ffn::train::OptimizerKind::adam, 1e-3});
    FitSpec spec;
    spec.steps = 3000;
    const auto record = fit(net, opt, X, Y, spec, rng);
    CHECK(record.status == "ok");
    CHECK(record.final_loss < 1e-6);
}

// At lr 3e-3: float32 Adam at 1e-2 oscillates on this problem (RMSE 0.0146
// after 4000 steps and 0.0234 after 8000, with the fused arithmetic of
// issue 32), where 3e-3 reaches 0.00165 and keeps falling.
TEST_CASE("a 1-64-1 tanh net fits sin(x) on [-pi pi] to RMSE below 1e-2 with Adam") {
    MLP<float> net({1, 64, 1}, Activation::tanh);
    Rng init = Rng::stream(0, 0, "init");
    initialize(net, {ffn::nn::InitScheme::torch_default}, init);
    const auto X = grid<float>(256, -std::numbers::pi, std::numbers::pi);
    Matrix<float> Y = xt::sin(X);
    Optimizer<float> opt(net.parameters(), {ffn::train::OptimizerKind::adam, 3e-3});
    FitSpec spec;
    spec.steps = 4000;
    Rng shuffle(1);
    const auto record = fit(net, opt, X, Y, spec, shuffle);
    CHECK(record.status == "ok");
    CHECK(std::sqrt(record.final_loss) < 1e-2);
}

TEST_CASE("training is bitwise deterministic for 1 and 2 gemm threads and for minibatches") {
    auto train = [](std::size_t threads) {
        gemm::set_max_threads(threads);
        MLP<float> net({64, 256, 64}, Activation::gelu);
        Rng init = Rng::stream(42, 1, "init"), data = Rng::stream(42, 1, "data"), shuffle = Rng::stream(42, 1, "shuffle");
        initialize(net, {ffn::nn::InitScheme::torch_default}, init);
        Matrix<float> X = Matrix<float>::from_shape({512, 64}), Y = Matrix<float>::from_shape({512, 64});
        for (auto& x : X) x = static_cast<float>(data.normal());
        for (auto& y : Y) y = static_cast<float>(data.normal());
        Optimizer<float> opt(net.parameters(), {ffn::train::OptimizerKind::adamw, 1e-3});
        FitSpec spec;
        spec.steps = 200;
        spec.batch_size = 128;
        fit(net, opt, X, Y, spec, shuffle);
        std::vector<float> weights;
        for (const auto& p : net.parameters()) weights.insert(weights.end(), p.value, p.value + p.size());
        return weights;
    };
    const auto one = train(1), two = train(2), again = train(2);
    gemm::set_max_threads(0);
    REQUIRE(one.size() == two.size());
    CHECK(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)) == 0);
    CHECK(std::memcmp(two.data(), again.data(), two.size() * sizeof(float)) == 0);
}

TEST_CASE("a diverging run stops with its status instead of producing NaNs") {
    MLP<double> net({1, 4, 1}, Activation::identity);
    Rng rng(1);
    initialize(net, {ffn::nn::InitScheme::normal, 1.0}, rng);
    const auto X = grid<double>(10, 100, 1000);
    Matrix<double> Y = X;
    Optimizer<double> opt(net.parameters(), {ffn::train::OptimizerKind::sgd, 10.0});
    FitSpec spec;
    spec.steps = 100;
    const auto record = fit(net, opt, X, Y, spec, rng);
    CHECK(record.status == "diverged");
    CHECK(record.steps_done < 100);
}
