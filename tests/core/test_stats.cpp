// The small statistics behind the tables: numpy's definitions, and a
// bootstrap that is a pure function of its stream.
#include <doctest/doctest.h>

#include "core/stats.h"

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
