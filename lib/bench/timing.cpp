#include "bench/timing.h"

#include <algorithm>
#include <chrono>
#include <vector>

namespace ffn::bench {

double median_seconds_per_call(const std::function<void()>& call, int repeats, double batch_seconds) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    call();
    const double first = std::chrono::duration<double>(clock::now() - t0).count();
    const long batch = std::max(1L, static_cast<long>(batch_seconds / std::max(first, 1e-9)));
    std::vector<double> per_call;
    for (int r = 0; r < repeats; ++r) {
        const auto start = clock::now();
        for (long i = 0; i < batch; ++i) call();
        per_call.push_back(std::chrono::duration<double>(clock::now() - start).count() / static_cast<double>(batch));
    }
    std::sort(per_call.begin(), per_call.end());
    return per_call[per_call.size() / 2];
}

}  // namespace ffn::bench
