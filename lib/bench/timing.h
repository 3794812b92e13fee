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

// `work` in a child process of its own: its wall time (reported by the
// child through a pipe) and its peak resident memory (wait4's maximum
// resident set), so that a measurement's memory is its own. `what` names
// the benchmark in messages; a failed child is an ffn::Error.
struct Measured {
    double seconds = 0;
    double peak_mb = 0;
};
Measured measure_in_child(const std::function<void()>& work, const char* what);

}  // namespace ffn::bench
