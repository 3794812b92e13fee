#pragma once
// Small statistics shared by the experiments and the benchmarks.
#include <algorithm>
#include <cmath>
#include <vector>

#include "core/rng.h"

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

// numpy's percentile (its default, linear interpolation between the two
// nearest ranks), q in [0, 100]; 0 for none.
inline double percentile(std::vector<double> v, double q) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    const double rank = q / 100.0 * static_cast<double>(v.size() - 1);
    const auto below = static_cast<std::size_t>(std::floor(rank));
    const std::size_t above = std::min(below + 1, v.size() - 1);
    return v[below] + (rank - static_cast<double>(below)) * (v[above] - v[below]);
}

// The percentile bootstrap interval of the median: `resamples` draws of
// v.size() values with replacement from `rng`, and the (100 - level) / 2
// and (100 + level) / 2 percentiles of their medians. It says how far the
// median of another seed set of the same size could land.
struct Interval {
    double lo = 0, hi = 0;
};
inline Interval bootstrap_median_interval(const std::vector<double>& v, Rng& rng, int resamples = 2000, double level = 95) {
    if (v.empty()) return {};
    std::vector<double> medians, draw(v.size());
    medians.reserve(static_cast<std::size_t>(resamples));
    const std::size_t n = v.size(), mid = n / 2;
    for (int b = 0; b < resamples; ++b) {
        for (double& x : draw) x = v[std::min(n - 1, static_cast<std::size_t>(rng.uniform01() * static_cast<double>(n)))];
        // numpy's median by selection, not a sort: linear in n.
        std::nth_element(draw.begin(), draw.begin() + static_cast<std::ptrdiff_t>(mid), draw.end());
        const double upper = draw[mid];
        medians.push_back(n % 2 ? upper : 0.5 * (*std::max_element(draw.begin(), draw.begin() + static_cast<std::ptrdiff_t>(mid)) + upper));
    }
    return {percentile(medians, (100 - level) / 2), percentile(medians, (100 + level) / 2)};
}

}  // namespace ffn
