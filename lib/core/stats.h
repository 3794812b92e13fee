#pragma once
// Small statistics shared by the experiments and the benchmarks.
#include <algorithm>
#include <cmath>
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

// The mean, summed in order; 0 for none.
inline double mean(const std::vector<double>& v) {
    if (v.empty()) return 0.0;
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
}

// The sample standard deviation (numpy's ddof = 1); 0 for fewer than two.
inline double sample_sd(const std::vector<double>& v) {
    if (v.size() < 2) return 0.0;
    const double m = mean(v);
    double ss = 0;
    for (double x : v) ss += (x - m) * (x - m);
    return std::sqrt(ss / static_cast<double>(v.size() - 1));
}

}  // namespace ffn
