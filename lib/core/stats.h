#pragma once
// Small statistics shared by the experiments and the benchmarks.
#include <algorithm>
#include <vector>

namespace ffn {

// numpy's median: the middle value, or the mean of the two middle values of
// an even count; 0 for none.
inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace ffn
