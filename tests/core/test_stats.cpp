// The small statistics behind the tables: numpy's definitions, and a
// bootstrap that is a pure function of its stream.
#include <doctest/doctest.h>

#include "core/stats.h"

#include <cmath>
#include <limits>

using namespace ffn;

TEST_CASE("percentile interpolates between ranks as numpy's default does") {
    const std::vector<double> v = {3, 1, 4, 1, 5, 9, 2, 6};
    // np.percentile(v, q) for q = 0, 2.5, 25, 50, 90, 97.5, 100; the
    // interpolation is a few operations, so 1e-12 covers its rounding.
    const double q[] = {0, 2.5, 25, 50, 90, 97.5, 100};
    const double numpy[] = {1.0, 1.0, 1.75, 3.5, 6.9, 8.475, 9.0};
    for (int i = 0; i < 7; ++i) CHECK(percentile(v, q[i]) == doctest::Approx(numpy[i]).epsilon(1e-12));
    CHECK(percentile({}, 50) == 0);
    CHECK(percentile({7}, 97.5) == 7);
}

TEST_CASE("the bootstrap interval of the median holds the median, repeats with its stream, and is a point for constant data") {
    std::vector<double> v;
    for (int i = 0; i < 40; ++i) v.push_back(i < 22 ? 0.3 + 0.001 * i : 0.5 + 0.001 * i);  // two clusters
    Rng a = Rng::stream(0, 1, "bootstrap"), b = Rng::stream(0, 1, "bootstrap");
    const Interval first = bootstrap_median_interval(v, a), again = bootstrap_median_interval(v, b);
    CHECK(first.lo == again.lo);
    CHECK(first.hi == again.hi);
    CHECK(first.lo <= median(v));
    CHECK(first.hi >= median(v));
    // The median sits near the edge of the lower cluster (22 of 40): another
    // draw of 40 often lands it in the upper one, so the interval spans both.
    CHECK(first.lo < 0.33);
    CHECK(first.hi > 0.5);
    Rng c = Rng::stream(0, 1, "bootstrap");
    const Interval point = bootstrap_median_interval(std::vector<double>(9, 0.25), c);
    CHECK(point.lo == 0.25);
    CHECK(point.hi == 0.25);
}

TEST_CASE("the bootstrap by counting ranks gives exactly the selection's interval: ties, infinities, odd and even counts") {
    // Exact equality: both take the same draws and pick the same order
    // statistics of the same values; only the way they find them differs.
    for (const std::size_t n : {1u, 2u, 3u, 4u, 40u, 101u, 500u}) {
        Rng data = Rng::stream(n, 7, "bootstrap data");
        std::vector<double> v(n);
        for (auto& x : v) x = std::floor(data.uniform01() * 12) / 4;  // many ties
        if (n > 3) {
            v[1] = std::numeric_limits<double>::infinity();
            v[2] = -std::numeric_limits<double>::infinity();
        }
        Rng a = Rng::stream(0, 3, "bootstrap"), b = Rng::stream(0, 3, "bootstrap");
        const Interval counted = bootstrap_median_interval(v, a, 300), selected = detail::bootstrap_median_interval_by_selection(v, b, 300, 95);
        // (a median of -inf and inf is NaN on both sides)
        const auto same = [](double x, double y) { return x == y || (x != x && y != y); };
        CHECK(same(counted.lo, selected.lo));
        CHECK(same(counted.hi, selected.hi));
        CHECK(a.uniform01() == b.uniform01());  // the same draws taken
    }
}
