#include "bench/timing.h"

#include <algorithm>
#include <chrono>

#include "core/stats.h"

namespace ffn::bench {

std::vector<double> batch_seconds_per_call(const std::function<void()>& call, int repeats, double batch_seconds,
                                           const std::function<void()>& before_batch) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    call();
    const double first = std::chrono::duration<double>(clock::now() - t0).count();
    const long batch = std::max(1L, static_cast<long>(batch_seconds / std::max(first, 1e-9)));
    std::vector<double> per_call;
    for (int r = 0; r < repeats; ++r) {
        if (before_batch) before_batch();
        const auto start = clock::now();
        for (long i = 0; i < batch; ++i) call();
        per_call.push_back(std::chrono::duration<double>(clock::now() - start).count() / static_cast<double>(batch));
    }
    return per_call;
}

double median_seconds_per_call(const std::function<void()>& call, int repeats, double batch_seconds) {
    return median(batch_seconds_per_call(call, repeats, batch_seconds));
}

}  // namespace ffn::bench
