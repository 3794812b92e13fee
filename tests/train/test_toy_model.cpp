// The toy model of superposition's engine: its hand-written gradient
// against finite differences of its loss, and a stack of instances against
// each instance alone.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "gemm/gemm.h"
#include "train/toy_model.h"

using namespace ffn;

TEST_CASE("toy_model: the hand-written gradient matches central differences of the loss") {
    using namespace ffn::train::toy_model;
    // float64, n = 4, m = 2, 37 samples (not a multiple of blocked_sum's 16).
    const Shape s{4, 2, 37};
    Rng rng(7);
    std::vector<double> W(s.m * s.n), b(s.n), x(s.n * s.batch), gW(W.size()), gb(b.size());
    const std::vector<double> importance = {1, 0.9, 0.81, 0.729};
    for (double& v : W) v = rng.normal();
    for (double& v : b) v = 0.1 * rng.normal();
    for (double& v : x) v = rng.uniform01() < 0.5 ? rng.uniform01() : 0.0;
    Workspace<double> work;
    gradient<double>(s, W.data(), b.data(), x.data(), importance.data(), gW.data(), gb.data(), work);
    // A step of 1e-6 keeps every pre-activation on its side of the ReLU's
    // kink (none is within 1e-4 of 0 here), so the difference quotient
    // errs by O(h^2) and rounding, about 1e-10 of the loss's scale; the
    // bound is 1e-7.
    const double h = 1e-6;
    auto at = [&](std::vector<double>& v, std::size_t k) {
        const double keep = v[k];
        v[k] = keep + h;
        const double up = loss(s, W.data(), b.data(), x.data(), importance.data());
        v[k] = keep - h;
        const double down = loss(s, W.data(), b.data(), x.data(), importance.data());
        v[k] = keep;
        return (up - down) / (2 * h);
    };
    double largest = 0;
    for (std::size_t k = 0; k < W.size(); ++k) {
        CHECK(gW[k] == doctest::Approx(at(W, k)).epsilon(1e-7).scale(1));
        largest = std::max(largest, std::fabs(gW[k]));
    }
    for (std::size_t k = 0; k < b.size(); ++k) CHECK(gb[k] == doctest::Approx(at(b, k)).epsilon(1e-7).scale(1));
    CHECK(largest > 1e-3);  // a gradient worth checking
}

// Bitwise: each instance of a stack gets the gradient it gets alone, in
// float32, on batches long enough for the gemm's packed kernels, with the
// stack's instances spread over two threads.
TEST_CASE("toy_model: a stack of instances gets each instance's gradient alone, bit for bit") {
    using namespace ffn::train::toy_model;
    const std::size_t I = 3;
    const Shape one{20, 5, 1000}, stack{20, 5, 1000, I};
    const std::size_t w_size = one.m * one.n, x_size = one.n * one.batch;
    Rng rng(11);
    std::vector<float> W(I * w_size), b(I * one.n), x(I * x_size), gW(W.size()), gb(b.size());
    std::vector<double> importance(one.n);
    for (std::size_t i = 0; i < one.n; ++i) importance[i] = std::pow(0.7, static_cast<double>(i));
    for (float& v : W) v = static_cast<float>(0.3 * rng.normal());
    for (float& v : b) v = static_cast<float>(0.1 * rng.normal());
    for (float& v : x) v = rng.uniform01() < 0.2 ? static_cast<float>(rng.uniform01()) : 0.0f;
    Workspace<float> work;
    const std::size_t before = gemm::max_threads();
    gemm::set_max_threads(2);
    gradient<float>(stack, W.data(), b.data(), x.data(), importance.data(), gW.data(), gb.data(), work);
    gemm::set_max_threads(before);
    for (std::size_t r = 0; r < I; ++r) {
        CAPTURE(r);
        std::vector<float> gW1(w_size), gb1(one.n);
        gradient<float>(one, W.data() + r * w_size, b.data() + r * one.n, x.data() + r * x_size, importance.data(),
                        gW1.data(), gb1.data(), work);
        CHECK(std::memcmp(gW1.data(), gW.data() + r * w_size, w_size * sizeof(float)) == 0);
        CHECK(std::memcmp(gb1.data(), gb.data() + r * one.n, one.n * sizeof(float)) == 0);
        CHECK(*std::max_element(gW1.begin(), gW1.end()) != 0.0f);  // a gradient worth comparing
    }
}
