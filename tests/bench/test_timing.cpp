// The benchmarks' timing (bench/timing.h): behaviour only, never a speed.
#include <doctest/doctest.h>

#include <vector>

#include "bench/timing.h"

TEST_CASE("batch timing: one warm-up, then the asked-for batches, each timed per call") {
    long calls = 0, setups = 0;
    volatile double sink = 0;
    const std::vector<double> per_call = ffn::bench::batch_seconds_per_call(
        [&] {
            ++calls;
            for (int i = 0; i < 1000; ++i) sink = sink + i;
        },
        4, 0.002, [&] { ++setups; });
    CHECK(per_call.size() == 4);
    for (const double s : per_call) CHECK(s > 0);
    CHECK(setups == 4);      // before each batch, untimed
    CHECK(calls >= 1 + 4);   // the warm-up and at least one call per batch
    CHECK(ffn::bench::median_seconds_per_call([&] { sink = sink + 1; }, 3, 0.001) > 0);
}
