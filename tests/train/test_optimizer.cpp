// One and several steps of each optimizer on a single parameter p = 1 with a
// constant gradient g = 0.5, against values derived by hand from PyTorch
// 1.13's formulas (see train/optimizer.h). float64 throughout; the expected
// values are computed in the test in the same operation order, so equality
// is to the last bit except where noted.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gemm/gemm.h"

#include "train/optimizer.h"

using namespace ffn;
using ffn::train::Optimizer;
using ffn::train::OptimizerKind;
using ffn::train::OptimizerSpec;

namespace {
struct Scalar {
    double p = 1.0, g = 0.5;
    std::vector<nn::ParamRef<double>> refs() { return {{"p", {1}, &p, &g}}; }
};
}  // namespace

TEST_CASE("SGD: plain, weight decay, momentum, nesterov") {
    {
        Scalar s;
        Optimizer<double> opt(s.refs(), {ffn::train::OptimizerKind::sgd, 0.1});
        opt.step();
        CHECK(s.p == 1.0 - 0.1 * 0.5);  // 0.95
    }
    {
        Scalar s;
        OptimizerSpec spec{OptimizerKind::sgd, 0.1};
        spec.weight_decay = 0.01;
        Optimizer<double> opt(s.refs(), spec);
        opt.step();
        CHECK(s.p == 1.0 + (-0.1) * (0.5 + 0.01 * 1.0));  // g + wd p = 0.51 -> 0.949
    }
    {
        Scalar s;
        OptimizerSpec spec{OptimizerKind::sgd, 0.1};
        spec.momentum = 0.9;
        Optimizer<double> opt(s.refs(), spec);
        opt.step();                // buf = g = 0.5 on the first step
        CHECK(s.p == 1.0 - 0.1 * 0.5);
        opt.step();                // buf = 0.9 * 0.5 + 1 * 0.5 = 0.95
        CHECK(s.p == (1.0 - 0.1 * 0.5) + (-0.1) * (0.5 * 0.9 + 0.5));
    }
    {
        Scalar s;
        OptimizerSpec spec{OptimizerKind::sgd, 0.1};
        spec.momentum = 0.9;
        spec.nesterov = true;
        Optimizer<double> opt(s.refs(), spec);
        opt.step();  // g + momentum * buf = 0.5 + 0.9 * 0.5 = 0.95
        CHECK(s.p == 1.0 + (-0.1) * (0.5 + 0.9 * 0.5));
    }
}

TEST_CASE("Adam: two steps with bias correction and eps outside the square root") {
    Scalar s;
    Optimizer<double> opt(s.refs(), {ffn::train::OptimizerKind::adam, 0.1});
    // Step 1: m = 0.1 * 0.5 = 0.05, v = (0.001 * 0.5) * 0.5 = 0.00025,
    // step_size = 0.1 / (1 - 0.9) = 1, denom = sqrt(v) / sqrt(1 - 0.999) + 1e-8.
    double m = 0.9 * 0 + 0.1 * 0.5, v = 0.999 * 0 + (1 - 0.999) * 0.5 * 0.5;
    double expected = 1.0 + (-(0.1 / (1 - 0.9))) * (m / (std::sqrt(v) / std::sqrt(1 - 0.999) + 1e-8));
    opt.step();
    CHECK(s.p == expected);
    CHECK(s.p == doctest::Approx(0.900000002).epsilon(1e-12));  // 1 - 0.05 / (0.5 + 1e-8)
    // Step 2: m = 0.095, v = 0.00049975; bias corrections 0.19 and 0.001999.
    m = m * 0.9 + 0.1 * 0.5;
    v = v * 0.999 + (1 - 0.999) * 0.5 * 0.5;
    expected = expected + (-(0.1 / (1 - std::pow(0.9, 2)))) * (m / (std::sqrt(v) / std::sqrt(1 - std::pow(0.999, 2)) + 1e-8));
    opt.step();
    CHECK(s.p == expected);
    CHECK(s.p == doctest::Approx(0.800000004).epsilon(1e-12));
}

TEST_CASE("Adam adds weight decay to the gradient - AdamW decays the weight first") {
    Scalar a, w;
    OptimizerSpec spec{OptimizerKind::adam, 0.1};
    spec.weight_decay = 0.1;
    Optimizer<double> adam(a.refs(), spec);
    spec.kind = OptimizerKind::adamw;
    Optimizer<double> adamw(w.refs(), spec);
    adam.step();
    adamw.step();
    // Adam: g = 0.5 + 0.1 * 1 = 0.6; after one step m / denom = 0.06 / (0.6 + 1e-8) ~ 0.1.
    const double g = 0.5 + 0.1 * 1.0;
    CHECK(a.p == 1.0 + (-1.0) * ((0.1 * g) / (std::sqrt((1 - 0.999) * g * g) / std::sqrt(1 - 0.999) + 1e-8)));
    // AdamW: p = 1 * (1 - 0.1 * 0.1) = 0.99, then the plain Adam step of 0.1.
    CHECK(w.p == 0.99 + (-1.0) * (0.05 / (std::sqrt(0.00025) / std::sqrt(1 - 0.999) + 1e-8)));
    CHECK(w.p == doctest::Approx(0.890000002).epsilon(1e-12));
}

TEST_CASE("schedules: warmup ramps linearly and cosine ends at min_lr") {
    using ffn::train::learning_rate;
    CHECK(learning_rate({ffn::train::ScheduleKind::constant}, 0.1, 5, 10) == 0.1);
    CHECK(learning_rate({ffn::train::ScheduleKind::warmup, 4}, 0.1, 0, 10) == doctest::Approx(0.025));
    CHECK(learning_rate({ffn::train::ScheduleKind::warmup, 4}, 0.1, 3, 10) == doctest::Approx(0.1));
    CHECK(learning_rate({ffn::train::ScheduleKind::cosine, 0, 0.01}, 0.1, 0, 11) == doctest::Approx(0.1));
    CHECK(learning_rate({ffn::train::ScheduleKind::cosine, 0, 0.01}, 0.1, 11, 11) == doctest::Approx(0.01));
    CHECK(learning_rate({ffn::train::ScheduleKind::cosine, 0, 0.0}, 0.1, 5, 10) == doctest::Approx(0.05));  // halfway
    CHECK_THROWS_WITH(ffn::train::parse_schedule("linear"), doctest::Contains("unknown schedule 'linear' (expected one of: constant, warmup, cosine)"));
}

TEST_CASE("an unknown optimizer is an error naming the choices") {
    CHECK_THROWS_WITH(ffn::train::parse_optimizer("adagrad"), doctest::Contains("unknown optimizer 'adagrad' (expected one of: sgd, adam, adamw)"));
    CHECK(ffn::train::parse_optimizer("adamw") == ffn::train::OptimizerKind::adamw);
}

// A moment decaying into the subnormal range is stored as zero (see
// train/optimizer.h); a normal one keeps its exact value. After a gradient
// of 1e-30 turns to zero, m = 1e-31 * 0.9^k stays normal for about 150
// steps, then would be subnormal for about 150 more.
TEST_CASE("Adam stores a subnormal moment as zero and leaves normal ones exact") {
    float p = 1.0f, g = 1e-30f;
    Optimizer<float> opt({{"p", {1}, &p, &g}}, {OptimizerKind::adam, 1e-3});
    opt.step();
    float m = 0.1f * 1e-30f;  // m after step 1, as the update computes it (0.9f * 0 + 0.1f * g)
    CHECK(opt.first_moment(0)[0] == m);
    g = 0.0f;
    int normal_steps = 0;
    while (m * 0.9f >= std::numeric_limits<float>::min()) {
        m = m * 0.9f;
        opt.step();
        ++normal_steps;
        REQUIRE(opt.first_moment(0)[0] == m);  // normal: the exact product, every step
    }
    CHECK(normal_steps > 100);
    opt.step();  // m * 0.9f is subnormal here, about 1.1e-38
    CHECK(m * 0.9f != 0.0f);
    CHECK(opt.first_moment(0)[0] == 0.0f);
}

// A tensor of 200,000 values is updated on gemm's threads, split in parts;
// each value's update is its own, so one thread and two give the same bits,
// and a value is updated exactly once (the split covers the tensor).
TEST_CASE("Adam's update split over threads gives the bits of one thread") {
    constexpr std::size_t n = 200000;
    auto train = [](std::size_t threads) {
        const std::size_t before = gemm::max_threads();
        gemm::set_max_threads(threads);
        std::vector<float> p(n), g(n);
        for (std::size_t i = 0; i < n; ++i) p[i] = static_cast<float>(i % 97) / 97.0f - 0.5f;
        OptimizerSpec spec{OptimizerKind::adamw, 1e-2};
        spec.weight_decay = 0.1;
        Optimizer<float> opt({{"w", {n}, p.data(), g.data()}}, spec);
        for (int step = 0; step < 3; ++step) {
            for (std::size_t i = 0; i < n; ++i) g[i] = p[i] * p[i] - 0.1f * static_cast<float>(step);
            opt.step();
        }
        gemm::set_max_threads(before);
        return p;
    };
    const std::vector<float> one = train(1), two = train(2);
    CHECK(std::memcmp(one.data(), two.data(), n * sizeof(float)) == 0);
    // A part updated twice or never would differ from one thread's bits;
    // and one thread's update does move every value.
    std::size_t unchanged = 0;
    for (std::size_t i = 0; i < n; ++i) unchanged += one[i] == static_cast<float>(i % 97) / 97.0f - 0.5f;
    CHECK(unchanged == 0);
}
