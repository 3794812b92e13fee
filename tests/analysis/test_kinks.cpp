// Piecewise-linear structure of 1-D ReLU nets (analysis/kinks.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "analysis/kinks.h"
#include "core/rng.h"

using namespace ffn;

TEST_CASE("kink_at: where a unit switches, and no kink for a zero weight") {
    CHECK(analysis::kink_at(2, -1) == 0.5);
    CHECK(analysis::kink_at(-4, 1) == 0.25);
    CHECK(std::isnan(analysis::kink_at(0, 1)));
}

TEST_CASE("kink counting: from weights strictly inside and from slope changes on a grid") {
    // Kinks at 0.3 and -0.5 inside (-2, 2); one at 3 outside; w = 0 has none.
    CHECK(analysis::kinks_inside({1, -1, 1, 0}, {-0.3, -0.5, -3, 1}, -2, 2) == 2);
    CHECK(analysis::kinks_inside({1}, {-2}, -2, 2) == 0);  // exactly on the boundary: not inside
    std::vector<double> y;
    const double dx = 4.0 / 4000;
    for (int k = 0; k <= 4000; ++k) {
        const double x = -2 + dx * k;
        y.push_back(std::max(0.0, x - 0.3) + 2 * std::max(0.0, -x - 0.5));
    }
    CHECK(analysis::slope_changes(y, dx, 1e-6) == 2);
}

TEST_CASE("the piecewise-linear lower bound is exact where the target is piecewise linear") {
    std::vector<double> x, y;
    for (int i = 0; i < 101; ++i) {
        x.push_back(-1 + 0.02 * i);
        y.push_back(std::fabs(x.back()));
    }
    CHECK(analysis::piecewise_linear_lower_bound(x, y, 2) < 1e-12);  // two pieces fit |x| exactly
    const double one = analysis::piecewise_linear_lower_bound(x, y, 1);
    CHECK(one > 0.2);  // the best line is y = mean |x| = 0.505: RMSE ~0.29
    CHECK(one < 0.35);
    CHECK(analysis::piecewise_linear_lower_bound(x, y, 3) <= analysis::piecewise_linear_lower_bound(x, y, 2));
}


TEST_CASE("linear_pieces walks the breakpoints of a ReLU net of any depth") {
    using ffn::nn::MLP;
    // L hats g(x) = 2 relu(x) - 4 relu(x - 1/2) composed as one MLP: block
    // s's down row times block s+1's up column gives the 2x2 middle layers
    // [[2, -4], [2, -4]] with biases (0, -1/2). A sawtooth of 2^L pieces.
    for (int L = 1; L <= 6; ++L) {
        std::vector<std::size_t> widths = {1};
        for (int k = 0; k < L; ++k) widths.push_back(2);
        widths.push_back(1);
        MLP<double> net(widths, ffn::nn::Activation::relu);
        net.layers[0].weight = ffn::nn::Matrix<double>{{1.0}, {1.0}};
        net.layers[0].bias = ffn::nn::Vector<double>{0.0, -0.5};
        for (int k = 1; k < L; ++k) {
            net.layers[static_cast<std::size_t>(k)].weight = ffn::nn::Matrix<double>{{2.0, -4.0}, {2.0, -4.0}};
            net.layers[static_cast<std::size_t>(k)].bias = ffn::nn::Vector<double>{0.0, -0.5};
        }
        net.layers.back().weight = ffn::nn::Matrix<double>{{2.0, -4.0}};
        net.layers.back().bias = ffn::nn::Vector<double>{0.0};
        CHECK(ffn::analysis::linear_pieces(net, 0.0, 1.0) == (std::int64_t{1} << L));
    }
    // One hidden layer: kinks at -1, 0.5 and 2 (outside [-1.5, 1.5]), and a
    // unit whose output weight is 0 bends nothing: 3 pieces.
    MLP<double> shallow({1, 4, 1}, ffn::nn::Activation::relu);
    shallow.layers[0].weight = ffn::nn::Matrix<double>{{1.0}, {2.0}, {1.0}, {1.0}};
    shallow.layers[0].bias = ffn::nn::Vector<double>{1.0, -1.0, -2.0, 0.3};
    shallow.layers[1].weight = ffn::nn::Matrix<double>{{1.0, -3.0, 5.0, 0.0}};
    shallow.layers[1].bias = ffn::nn::Vector<double>{0.0};
    CHECK(ffn::analysis::linear_pieces(shallow, -1.5, 1.5) == 3);
    MLP<double> tanh_net({1, 2, 1}, ffn::nn::Activation::tanh);
    CHECK_THROWS_WITH(ffn::analysis::linear_pieces(tanh_net, 0, 1), doctest::Contains("a ReLU net"));
}

namespace {
// The whole grid's count, the reference relu_net_slope_changes must equal.
int whole_grid_count(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v, double c,
                     double lo, double dx, std::size_t points, double tolerance) {
    std::vector<double> y;
    analysis::relu_net_on_grid(w, b, v, c, lo, dx, points, y);
    return analysis::slope_changes(y, dx, tolerance);
}
}  // namespace

TEST_CASE("relu_net_slope_changes: the whole grid's count, reading only the points near the kinks") {
    // Exact equality: both read the same y_k, computed by the same
    // operations, wherever a change can be; the bound shows none elsewhere.
    ffn::Rng rng(20261203);
    const double lo = -2, hi = 2;
    int windowed = 0, order_one = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        const std::size_t m = 1 + static_cast<std::size_t>(rng.uniform01() * 12);
        const std::size_t points = trial % 3 == 0 ? 40001 : 3 + static_cast<std::size_t>(rng.uniform01() * 500);
        const double dx = (hi - lo) / static_cast<double>(points - 1);
        std::vector<double> w(m), b(m), v(m);
        for (std::size_t j = 0; j < m; ++j) {
            w[j] = rng.normal();
            // Kinks on grid points, on midpoints, two at one place, and
            // units with no kink or no slope change.
            const int kind = static_cast<int>(rng.uniform01() * 6);
            const double k = std::floor(rng.uniform01() * static_cast<double>(points));
            const double at = kind == 0 ? lo + dx * k : kind == 1 ? lo + dx * (k + 0.5) : kind == 2 && j > 0 && w[j - 1] != 0 ? -b[j - 1] / w[j - 1]
                                                                                                            : rng.uniform(-3, 3);
            b[j] = -w[j] * at;
            v[j] = kind == 3 ? 0.0 : rng.normal();
            if (kind == 4) w[j] = 0.0;
            if (kind == 5) v[j] *= 1e-9;  // a slope change below the tolerance
        }
        const double c = rng.normal();
        double scale = 0;
        for (std::size_t j = 0; j < m; ++j) scale = std::max(scale, std::fabs(w[j] * v[j]));
        const double tolerance = std::max(1e-7 * scale, 1e-9);
        if (scale > 0.1) {
            ++order_one;
            windowed += analysis::relu_grid_noise_below(w, b, v, c, lo, dx, points, tolerance);
        }
        CHECK(analysis::relu_net_slope_changes(w, b, v, c, lo, dx, points, tolerance) ==
              whole_grid_count(w, b, v, c, lo, dx, points, tolerance));
    }
    // Every net with a visible kink (|w v| > 0.1) takes the short way, so the
    // comparison above tested it.
    CHECK(order_one > 2000);
    CHECK(windowed == order_one);
}

TEST_CASE("relu_net_slope_changes reads the whole grid where rounding could reach the tolerance") {
    const double lo = -2, dx = 4.0 / 40000;
    const std::size_t points = 40001;
    // An output bias of 1e9 puts rounding of about 1e-7 in y, 2e-3 in the
    // slopes; and non-finite weights (a diverged run).
    const std::vector<double> w = {1, -1}, b = {-0.3, -0.5}, v = {1, 2};
    CHECK(analysis::relu_grid_noise_below(w, b, v, 0.0, lo, dx, points, 1e-7));
    CHECK_FALSE(analysis::relu_grid_noise_below(w, b, v, 1e9, lo, dx, points, 1e-7));
    CHECK(analysis::relu_net_slope_changes(w, b, v, 1e9, lo, dx, points, 1e-7) ==
          whole_grid_count(w, b, v, 1e9, lo, dx, points, 1e-7));
    const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
    for (const double bad : {inf, nan}) {
        const std::vector<double> wb = {1, bad};
        CHECK_FALSE(analysis::relu_grid_noise_below(wb, b, v, 0.0, lo, dx, points, 1e-7));
        CHECK(analysis::relu_net_slope_changes(wb, b, v, 0.0, lo, dx, points, 1e-7) ==
              whole_grid_count(wb, b, v, 0.0, lo, dx, points, 1e-7));
    }
    CHECK(analysis::relu_net_slope_changes(w, b, v, 0.0, lo, dx, points, 1e-7) == 2);
}
