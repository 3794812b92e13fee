#pragma once
// Timing for benchmarks: batches of calls long enough to time reliably, the
// median over batches (shared, noisy machines: medians, not means).
#include <functional>

namespace ffn::bench {

// Seconds per call of `call`: one warm-up call, then `repeats` batches of as
// many calls as fill about `batch_seconds`; returns the median batch's time
// per call.
double median_seconds_per_call(const std::function<void()>& call, int repeats = 5, double batch_seconds = 0.05);

}  // namespace ffn::bench
