#pragma once
// Timing for benchmarks: batches of calls long enough to time reliably, the
// median over batches (shared, noisy machines: medians, not means).
#include <functional>
#include <vector>

namespace ffn::bench {

// Seconds per call of `call` in each of `repeats` batches: one warm-up call,
// then batches of as many calls as fill about `batch_seconds`.
// `before_batch`, when given, runs untimed before each batch.
std::vector<double> batch_seconds_per_call(const std::function<void()>& call, int repeats, double batch_seconds,
                                           const std::function<void()>& before_batch = {});

// The median batch's time per call (see batch_seconds_per_call).
double median_seconds_per_call(const std::function<void()>& call, int repeats = 5, double batch_seconds = 0.05);

}  // namespace ffn::bench
