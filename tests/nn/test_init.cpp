// The initialisers (nn/init.h): PyTorch's default bounds, the named
// schemes' scales, and the streams that fix every number.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "core/rng.h"
#include "nn/init.h"
#include "nn/mlp.h"

using namespace ffn;
using namespace ffn::nn;

TEST_CASE("initialisers: PyTorch's default bounds and the named schemes") {
    MLP<double> m({16, 64, 4}, Activation::relu);
    Rng rng(3);
    initialize(m, {InitScheme::torch_default}, rng);
    double max_up = 0, max_bias = 0;
    for (auto w : m.layers[0].weight) max_up = std::max(max_up, std::fabs(w));
    for (auto b : m.layers[0].bias) max_bias = std::max(max_bias, std::fabs(b));
    CHECK(max_up <= 0.25);  // 1 / sqrt(16)
    CHECK(max_up > 0.2);    // and fills the range: 1024 draws
    CHECK(max_bias <= 0.25);
    for (auto w : m.layers[1].weight) CHECK(std::fabs(w) <= 0.125);  // 1 / sqrt(64)
    initialize(m, {InitScheme::constant, 0, 0, 0, 0.5}, rng);
    CHECK(m.layers[1].weight(0, 0) == 0.5);
    CHECK(m.layers[1].bias(0) == 0.0);  // biases zero outside torch_default
    CHECK_THROWS_WITH(parse_init_scheme("he_normal"), doctest::Contains("unknown init scheme 'he_normal'"));
}

TEST_CASE("initialisers: each normal scheme's spread is its formula's, and a stream fixes every number") {
    // 256 x 1024 weights: the sample sd is within 2% of the formula's
    // (the sd of a sample sd over 262144 draws is about 0.14%).
    auto sd_of = [](const MLP<double>& m) {
        double sum = 0, sum_sq = 0;
        for (auto w : m.layers[0].weight) {
            sum += w;
            sum_sq += w * w;
        }
        const double n = static_cast<double>(m.layers[0].weight.size());
        return std::sqrt(sum_sq / n - (sum / n) * (sum / n));
    };
    MLP<double> m({1024, 256, 4}, Activation::relu);
    Rng rng(5);
    initialize(m, {InitScheme::kaiming_normal}, rng);
    CHECK(sd_of(m) == doctest::Approx(std::sqrt(2.0 / 1024)).epsilon(0.02));
    initialize(m, {InitScheme::xavier_normal}, rng);
    CHECK(sd_of(m) == doctest::Approx(std::sqrt(2.0 / (1024 + 256))).epsilon(0.02));
    initialize(m, {InitScheme::normal, 0.5}, rng);
    CHECK(sd_of(m) == doctest::Approx(0.5).epsilon(0.02));
    MLP<double> a({8, 16, 2}, Activation::relu), b({8, 16, 2}, Activation::relu);
    Rng ra = Rng::stream(7, 1, "init"), rb = Rng::stream(7, 1, "init");
    initialize(a, {InitScheme::xavier_uniform}, ra);
    initialize(b, {InitScheme::xavier_uniform}, rb);
    CHECK(a.layers[0].weight == b.layers[0].weight);
    CHECK(a.layers[1].weight == b.layers[1].weight);
}
