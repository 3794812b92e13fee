// Instance-batched training (nn/batched.h): I nets (MLPs, gated and bilinear
// blocks, norms, pre-norm residual blocks) trained as one
// computation (one gemm_batched call per product, one optimizer over the
// stacked parameters, one stacked loss) end with the bits each net reaches
// trained alone, for every activation family (relu and identity through
// the gemm's pointwise epilogue, smooth ones through the kept derivative),
// every optimizer, float32 and float64, and one thread or two (two
// threads spread the instances over the threads). Bitwise, no tolerance:
// the batched path runs the same products and loops on the same slices.
#include <doctest/doctest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "support.h"
#include "core/error.h"
#include "core/rng.h"
#include "gemm/gemm.h"
#include "nn/batched.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "nn/norm.h"
#include "nn/residual.h"
#include "train/loss.h"
#include "train/optimizer.h"

using namespace ffn;
using test::same_bits;

namespace {

template <class T>
using ModulePtr = std::unique_ptr<nn::Module<T>>;

// Trains I nets alone and batched for 4 steps from the same weights and
// data, and compares every loss, input gradient and weight bit for bit.
// `make_alone(i)` gives instance i's net (initialised), `make_batched()` the
// batched form.
template <class T>
void check_batched_equals_alone(const std::function<ModulePtr<T>(std::size_t)>& make_alone,
                                const std::function<ModulePtr<T>()>& make_batched, std::size_t d_in, std::size_t d_out,
                                const train::OptimizerSpec& spec, std::size_t threads, std::size_t I = 3,
                                std::size_t tokens = 23) {
    const std::size_t before = gemm::max_threads();
    gemm::set_max_threads(threads);

    std::vector<ModulePtr<T>> alone;
    ModulePtr<T> batched = make_batched();
    std::vector<nn::Matrix<T>> X, Y;
    nn::Matrix<T> Xs = nn::Matrix<T>::from_shape({I * tokens, d_in});
    nn::Matrix<T> Ys = nn::Matrix<T>::from_shape({I * tokens, d_out});
    for (std::size_t i = 0; i < I; ++i) {
        alone.push_back(make_alone(i));
        nn::set_instance(*batched, i, *alone[i]);
        Rng data = Rng::stream(i, 0, "data");
        X.push_back(nn::Matrix<T>::from_shape({tokens, d_in}));
        Y.push_back(nn::Matrix<T>::from_shape({tokens, d_out}));
        for (auto& x : X[i]) x = static_cast<T>(data.normal());
        for (auto& y : Y[i]) y = static_cast<T>(data.normal());
        std::memcpy(Xs.data() + i * X[i].size(), X[i].data(), X[i].size() * sizeof(T));
        std::memcpy(Ys.data() + i * Y[i].size(), Y[i].data(), Y[i].size() * sizeof(T));
    }
    std::vector<train::Optimizer<T>> opts;
    for (auto& net : alone) opts.emplace_back(net->parameters(), spec);
    train::Optimizer<T> batched_opt(batched->parameters(), spec);

    std::vector<std::vector<double>> losses_alone(I), losses_batched(I);
    std::size_t input_grads_differing = 0;
    nn::Matrix<T> grad, grads;
    for (int step = 0; step < 4; ++step) {
        std::vector<nn::Matrix<T>> input_grads;
        for (std::size_t i = 0; i < I; ++i) {
            losses_alone[i].push_back(train::mse_loss(alone[i]->forward(X[i]), Y[i], grad));
            input_grads.push_back(alone[i]->backward(grad));
            opts[i].step();
        }
        const auto losses = train::batched_mse_loss(batched->forward(Xs), Ys, I, grads);
        for (std::size_t i = 0; i < I; ++i) losses_batched[i].push_back(losses[i]);
        const nn::Matrix<T>& dXs = batched->backward(grads);
        for (std::size_t i = 0; i < I; ++i)
            if (!same_bits(dXs.data() + i * tokens * d_in, input_grads[i].data(), tokens * d_in)) ++input_grads_differing;
        batched_opt.step();
    }
    gemm::set_max_threads(before);

    CHECK(input_grads_differing == 0);
    for (std::size_t i = 0; i < I; ++i) {
        CAPTURE(i);
        CHECK(losses_alone[i] == losses_batched[i]);
        ModulePtr<T> trained = make_alone(0);
        nn::get_instance(*batched, i, *trained);
        const auto got = trained->parameters(), want = alone[i]->parameters();
        REQUIRE(got.size() == want.size());
        for (std::size_t k = 0; k < got.size(); ++k) {
            CAPTURE(want[k].name);
            CHECK(same_bits(got[k].value, want[k].value, want[k].size()));
        }
    }
    // The nets did train (a test of equality between two frozen copies
    // would pass without a batched step).
    CHECK(losses_alone[0].back() != losses_alone[0].front());
}

template <class T>
ModulePtr<T> initialized(ModulePtr<T> net, std::size_t i) {
    Rng init = Rng::stream(i, 0, "init");
    nn::initialize(*net, {nn::InitScheme::torch_default}, init);
    return net;
}

template <class T>
void check_mlp(nn::Activation act, const train::OptimizerSpec& spec, std::size_t threads) {
    const std::vector<std::size_t> widths = {5, 16, 7, 2};
    check_batched_equals_alone<T>(
        [&](std::size_t i) { return initialized<T>(std::make_unique<nn::MLP<T>>(widths, act), i); },
        [&] { return std::make_unique<nn::BatchedMLP<T>>(3, widths, act); }, widths.front(), widths.back(), spec,
        threads);
}

template <class T>
void check_gated(nn::Activation act, bool bias, const train::OptimizerSpec& spec, std::size_t threads) {
    constexpr std::size_t d = 6, hidden = 11;
    check_batched_equals_alone<T>(
        [&](std::size_t i) { return initialized<T>(std::make_unique<nn::GatedMLP<T>>(d, hidden, act, bias), i); },
        [&] { return std::make_unique<nn::BatchedGatedMLP<T>>(3, d, hidden, act, bias); }, d, d, spec, threads);
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
                check_mlp<float>(act, optimizer(kind), threads);
            }
    check_mlp<double>(nn::Activation::silu, optimizer(train::OptimizerKind::adam), 2);
}

TEST_CASE("batched gated blocks train to the bits of each alone: every GLU variant, with and without bias") {
    for (const auto& variant : nn::gated_variant_names())
        for (const bool bias : {false, true})
            for (const std::size_t threads : {1, 2}) {
                CAPTURE(variant);
                CAPTURE(bias);
                CAPTURE(threads);
                check_gated<float>(nn::gated_variant_activation(variant), bias, optimizer(train::OptimizerKind::adamw),
                                   threads);
            }
    check_gated<double>(nn::Activation::silu, true, optimizer(train::OptimizerKind::sgd), 2);
}

// Products big enough for the packed kernels, whose per-tile epilogues run
// the hooks, and for a net alone to split each product over two threads
// while the batched one runs each instance on one thread.
TEST_CASE("batched MLPs equal each alone on packed, threaded products") {
    constexpr std::size_t I = 2, tokens = 128;
    const std::vector<std::size_t> widths = {64, 256, 64};
    for (const auto act : {nn::Activation::relu, nn::Activation::gelu}) {
        CAPTURE(std::string(nn::to_string(act)));
        check_batched_equals_alone<float>(
            [&](std::size_t i) { return initialized<float>(std::make_unique<nn::MLP<float>>(widths, act), i); },
            [&] { return std::make_unique<nn::BatchedMLP<float>>(I, widths, act); }, widths.front(), widths.back(),
            optimizer(train::OptimizerKind::adam), 2, I, tokens);
    }
}

TEST_CASE("batched bilinear blocks train to the bits of each alone: rank 1 and 2, with and without bias") {
    constexpr std::size_t d = 6, hidden = 9;
    for (const std::size_t rank : {1, 2})
        for (const bool bias : {false, true})
            for (const auto act : {nn::Activation::identity, nn::Activation::gelu})
                for (const std::size_t threads : {1, 2}) {
                    CAPTURE(rank);
                    CAPTURE(bias);
                    CAPTURE(std::string(nn::to_string(act)));
                    CAPTURE(threads);
                    check_batched_equals_alone<float>(
                        [&](std::size_t i) {
                            return initialized<float>(std::make_unique<nn::BilinearMLP<float>>(d, hidden, rank, act, bias), i);
                        },
                        [&] { return std::make_unique<nn::BatchedBilinearMLP<float>>(3, d, hidden, rank, act, bias); }, d,
                        d, optimizer(train::OptimizerKind::adam), threads);
                }
}

// The norms' scales start at one: Adam moves them, which the weights'
// comparison then sees. A residual block's batched form is PreNormResidual
// around batched modules (nn/batched.h); the residual and the norm below
// the feed-forward module need its input gradient, which this checks too.
TEST_CASE("batched norms and pre-norm residual blocks train to the bits of each alone") {
    constexpr std::size_t d = 6;
    const std::vector<std::size_t> widths = {d, 16, d};
    enum class Norm { none, layer, rms };
    for (const Norm norm : {Norm::none, Norm::layer, Norm::rms})
        for (const auto act : {nn::Activation::relu, nn::Activation::silu})
            for (const auto kind : {train::OptimizerKind::sgd, train::OptimizerKind::adamw}) {
                CAPTURE(static_cast<int>(norm));
                CAPTURE(std::string(nn::to_string(act)));
                CAPTURE(static_cast<int>(kind));
                const auto alone_norm = [&]() -> ModulePtr<float> {
                    if (norm == Norm::layer) return std::make_unique<nn::LayerNorm<float>>(d);
                    if (norm == Norm::rms) return std::make_unique<nn::RMSNorm<float>>(d);
                    return nullptr;
                };
                const auto batched_norm = [&]() -> ModulePtr<float> {
                    if (norm == Norm::layer) return std::make_unique<nn::BatchedLayerNorm<float>>(3, d);
                    if (norm == Norm::rms) return std::make_unique<nn::BatchedRMSNorm<float>>(3, d);
                    return nullptr;
                };
                check_batched_equals_alone<float>(
                    [&](std::size_t i) {
                        return initialized<float>(std::make_unique<nn::PreNormResidual<float>>(
                                                      alone_norm(), std::make_unique<nn::MLP<float>>(widths, act)),
                                                  i);
                    },
                    [&] {
                        return std::make_unique<nn::PreNormResidual<float>>(
                            batched_norm(), std::make_unique<nn::BatchedMLP<float>>(3, widths, act));
                    },
                    d, d, optimizer(kind), 2);
            }
    // A norm alone, in float64, behind nothing: its own input gradient.
    check_batched_equals_alone<double>([&](std::size_t) { return std::make_unique<nn::LayerNorm<double>>(d); },
                                       [&] { return std::make_unique<nn::BatchedLayerNorm<double>>(3, d); }, d, d,
                                       optimizer(train::OptimizerKind::adam), 1);
}

TEST_CASE("set_instance refuses a module of another shape, kind or instance") {
    nn::BatchedMLP<float> batched(3, {4, 8, 1}, nn::Activation::relu);
    // 16 units: each of its tensors' sizes divides the stack's, which a
    // check of sizes alone would take.
    nn::MLP<float> wider({4, 16, 1}, nn::Activation::relu), deeper({4, 8, 8, 1}, nn::Activation::relu),
        same({4, 8, 1}, nn::Activation::relu);
    nn::GatedMLP<float> gated(4, 8, nn::Activation::silu);
    CHECK_THROWS_WITH_AS(nn::set_instance<float>(batched, 0, wider), doctest::Contains("does not stack"), ffn::Error);
    CHECK_THROWS_WITH_AS(nn::set_instance<float>(batched, 0, deeper), doctest::Contains("different parameters"), ffn::Error);
    CHECK_THROWS_WITH_AS(nn::set_instance<float>(batched, 0, gated), doctest::Contains("different parameters"), ffn::Error);
    CHECK_THROWS_WITH_AS(nn::set_instance<float>(batched, 3, same), doctest::Contains("no instance 3"), ffn::Error);
    CHECK_THROWS_WITH_AS(nn::get_instance<float>(batched, 0, wider), doctest::Contains("get_instance: parameter 'up.weight'"),
                         ffn::Error);
    CHECK_NOTHROW(nn::set_instance<float>(batched, 2, same));
}

// A hook sees the stack's hidden activations and may change them: the same
// change, made to each instance alone, gives the same outputs, bit for bit.
TEST_CASE("a batched module's hook sees the stacked hidden activations, as each alone sees its own") {
    constexpr std::size_t I = 3, tokens = 5, d = 4, hidden = 8;
    const auto halve_odd_columns = [](std::size_t, nn::Matrix<float>& h) {
        for (std::size_t r = 0; r < h.shape()[0]; ++r)
            for (std::size_t c = 1; c < h.shape()[1]; c += 2) h(r, c) *= 0.5f;
    };
    const auto compare = [&](nn::Module<float>& batched, const std::function<ModulePtr<float>(std::size_t)>& make_alone) {
        nn::Matrix<float> X = nn::Matrix<float>::from_shape({I * tokens, d});
        Rng data = Rng::stream(0, 0, "data");
        for (auto& x : X) x = static_cast<float>(data.normal());
        std::vector<ModulePtr<float>> alone;
        for (std::size_t i = 0; i < I; ++i) {
            alone.push_back(make_alone(i));
            nn::set_instance(batched, i, *alone[i]);
        }
        const nn::Matrix<float> plain = batched.forward_with_hook(X);
        const nn::Matrix<float> hooked = batched.forward_with_hook(X, halve_odd_columns);
        CHECK(!same_bits(plain.data(), hooked.data(), plain.size()));  // the hook did change something
        for (std::size_t i = 0; i < I; ++i) {
            nn::Matrix<float> Xi = nn::Matrix<float>::from_shape({tokens, d});
            std::memcpy(Xi.data(), X.data() + i * tokens * d, tokens * d * sizeof(float));
            const nn::Matrix<float> want = alone[i]->forward_with_hook(Xi, halve_odd_columns);
            CHECK(same_bits(hooked.data() + i * want.size(), want.data(), want.size()));
        }
    };
    SUBCASE("MLP") {
        nn::BatchedMLP<float> batched(I, {d, hidden, hidden, d}, nn::Activation::gelu);
        compare(batched, [&](std::size_t i) {
            return initialized<float>(std::make_unique<nn::MLP<float>>(std::vector<std::size_t>{d, hidden, hidden, d},
                                                                       nn::Activation::gelu),
                                      i);
        });
    }
    SUBCASE("gated") {
        nn::BatchedGatedMLP<float> batched(I, d, hidden, nn::Activation::silu);
        compare(batched, [&](std::size_t i) {
            return initialized<float>(std::make_unique<nn::GatedMLP<float>>(d, hidden, nn::Activation::silu), i);
        });
    }
    SUBCASE("bilinear") {
        nn::BatchedBilinearMLP<float> batched(I, d, hidden, 2, nn::Activation::identity);
        compare(batched, [&](std::size_t i) {
            return initialized<float>(std::make_unique<nn::BilinearMLP<float>>(d, hidden, 2, nn::Activation::identity), i);
        });
    }
}

TEST_CASE("a stack that does not split into the instances is refused") {
    nn::BatchedMLP<float> batched(3, {4, 8, 1}, nn::Activation::relu);
    const nn::Matrix<float> X = nn::Matrix<float>::from_shape({10, 4});  // 10 rows for 3 instances
    CHECK_THROWS_WITH_AS(batched.forward(X),
                         doctest::Contains("BatchedLinear: expected a stack of 3 [tokens, 4] matrices, got 10 x 4"), ffn::Error);
    CHECK_THROWS_WITH_AS(nn::BatchedBilinearMLP<float>(3, 4, 8, 0, nn::Activation::identity),
                         doctest::Contains("BatchedBilinearMLP: rank must be at least 1"), ffn::Error);
}
