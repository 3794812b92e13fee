// Instance-batched training (nn/batched.h): I nets trained as one
// computation (one gemm_batched call per product, one optimizer over the
// stacked parameters, one stacked loss) end with the bits each net reaches
// trained alone, for every activation family (relu and identity through
// the gemm's pointwise epilogue, smooth ones through the kept derivative),
// every optimizer, float32 and float64, and one thread or two (two
// threads spread the instances over the threads). Bitwise, no tolerance:
// the batched path runs the same products and loops on the same slices.
#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "gemm/gemm.h"
#include "nn/batched.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "train/loss.h"
#include "train/optimizer.h"

using namespace ffn;

namespace {

template <class T>
bool same_bits(const T* a, const T* b, std::size_t n) {
    return std::memcmp(a, b, n * sizeof(T)) == 0;
}

template <class T>
void check_batched_equals_alone(nn::Activation act, const train::OptimizerSpec& spec, std::size_t threads) {
    constexpr std::size_t I = 3, tokens = 23;
    const std::vector<std::size_t> widths = {5, 16, 7, 2};
    const std::size_t before = gemm::max_threads();
    gemm::set_max_threads(threads);

    std::vector<nn::MLP<T>> alone;
    nn::BatchedMLP<T> batched(I, widths, act);
    std::vector<nn::Matrix<T>> X, Y;
    nn::Matrix<T> Xs = nn::Matrix<T>::from_shape({I * tokens, widths.front()});
    nn::Matrix<T> Ys = nn::Matrix<T>::from_shape({I * tokens, widths.back()});
    for (std::size_t i = 0; i < I; ++i) {
        alone.emplace_back(widths, act);
        Rng init = Rng::stream(i, 0, "init");
        nn::initialize(alone[i], {nn::InitScheme::torch_default}, init);
        batched.set_instance(i, alone[i]);
        Rng data = Rng::stream(i, 0, "data");
        X.push_back(nn::Matrix<T>::from_shape({tokens, widths.front()}));
        Y.push_back(nn::Matrix<T>::from_shape({tokens, widths.back()}));
        for (auto& x : X[i]) x = static_cast<T>(data.normal());
        for (auto& y : Y[i]) y = static_cast<T>(data.normal());
        std::memcpy(Xs.data() + i * X[i].size(), X[i].data(), X[i].size() * sizeof(T));
        std::memcpy(Ys.data() + i * Y[i].size(), Y[i].data(), Y[i].size() * sizeof(T));
    }
    std::vector<train::Optimizer<T>> opts;
    for (auto& net : alone) opts.emplace_back(net.parameters(), spec);
    train::Optimizer<T> batched_opt(batched.parameters(), spec);

    std::vector<std::vector<double>> losses_alone(I), losses_batched(I);
    nn::Matrix<T> grad, grads;
    for (int step = 0; step < 4; ++step) {
        for (std::size_t i = 0; i < I; ++i) {
            losses_alone[i].push_back(train::mse_loss(alone[i].forward(X[i]), Y[i], grad));
            alone[i].backward(grad, /*need_input_grad=*/false);
            opts[i].step();
        }
        const auto losses = train::batched_mse_loss(batched.forward(Xs), Ys, I, grads);
        for (std::size_t i = 0; i < I; ++i) losses_batched[i].push_back(losses[i]);
        batched.backward(grads);
        batched_opt.step();
    }
    gemm::set_max_threads(before);

    for (std::size_t i = 0; i < I; ++i) {
        CAPTURE(i);
        CHECK(losses_alone[i] == losses_batched[i]);
        nn::MLP<T> trained(widths, act);
        batched.get_instance(i, trained);
        for (std::size_t l = 0; l < trained.layers.size(); ++l) {
            CAPTURE(l);
            CHECK(same_bits(trained.layers[l].weight.data(), alone[i].layers[l].weight.data(), trained.layers[l].weight.size()));
            CHECK(same_bits(trained.layers[l].bias.data(), alone[i].layers[l].bias.data(), trained.layers[l].bias.size()));
        }
    }
    // The nets did train (a test of equality between two frozen copies
    // would pass without a batched step).
    CHECK(losses_alone[0].back() != losses_alone[0].front());
}

train::OptimizerSpec optimizer(train::OptimizerKind kind) {
    train::OptimizerSpec spec{kind, 1e-2};
    if (kind == train::OptimizerKind::sgd) spec.momentum = 0.9;
    if (kind != train::OptimizerKind::sgd) spec.weight_decay = 0.01;
    return spec;
}

}  // namespace

TEST_CASE("batched MLPs train to the bits of each MLP alone: every activation family and optimizer, 1 and 2 threads") {
    for (const auto act : {nn::Activation::relu, nn::Activation::gelu, nn::Activation::tanh, nn::Activation::identity})
        for (const auto kind : {train::OptimizerKind::sgd, train::OptimizerKind::adam, train::OptimizerKind::adamw})
            for (const std::size_t threads : {1, 2}) {
                CAPTURE(std::string(nn::to_string(act)));
                CAPTURE(static_cast<int>(kind));
                CAPTURE(threads);
                check_batched_equals_alone<float>(act, optimizer(kind), threads);
            }
    check_batched_equals_alone<double>(nn::Activation::silu, optimizer(train::OptimizerKind::adam), 2);
}

TEST_CASE("a stack that does not split into the instances is refused") {
    nn::BatchedMLP<float> batched(3, {4, 8, 1}, nn::Activation::relu);
    const nn::Matrix<float> X = nn::Matrix<float>::from_shape({10, 4});  // 10 rows for 3 instances
    CHECK_THROWS_WITH_AS(batched.forward(X), doctest::Contains("expected a stack of 3 [tokens, 4] matrices, got 10 x 4"),
                         ffn::Error);
}
