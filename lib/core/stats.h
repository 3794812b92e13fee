#pragma once
// Small statistics shared by the experiments and the benchmarks.
#include <algorithm>
#include <cmath>
#include <cstdint>
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
namespace detail {
// The bootstrap as first written: each resample's median by selection.
// Kept for samples holding NaN, whose order std::sort does not define.
inline Interval bootstrap_median_interval_by_selection(const std::vector<double>& v, Rng& rng, int resamples, double level) {
    std::vector<double> medians, draw(v.size());
    medians.reserve(static_cast<std::size_t>(resamples));
    const std::size_t n = v.size(), mid = n / 2;
    for (int b = 0; b < resamples; ++b) {
        for (double& x : draw) x = v[std::min(n - 1, static_cast<std::size_t>(rng.uniform01() * static_cast<double>(n)))];
        std::nth_element(draw.begin(), draw.begin() + static_cast<std::ptrdiff_t>(mid), draw.end());
        const double upper = draw[mid];
        medians.push_back(n % 2 ? upper : 0.5 * (*std::max_element(draw.begin(), draw.begin() + static_cast<std::ptrdiff_t>(mid)) + upper));
    }
    return {percentile(medians, (100 - level) / 2), percentile(medians, (100 + level) / 2)};
}
}  // namespace detail

inline Interval bootstrap_median_interval(const std::vector<double>& v, Rng& rng, int resamples = 2000, double level = 95) {
    if (v.empty()) return {};
    if (v.size() >= (std::size_t{1} << 32) || std::any_of(v.begin(), v.end(), [](double x) { return x != x; }))
        return detail::bootstrap_median_interval_by_selection(v, rng, resamples, level);
    // The same draws and the same medians as selecting them (numpy's way),
    // cheaper: a resample is a count per drawn index, and its k-th value is
    // v's sorted value where the counts, read in v's order, pass k. A million
    // runs' summary spent a third of its time selecting. The counts are
    // 32-bit (a cell of 2^32 runs does not fit in memory) so that they and
    // the order stay in cache.
    const std::size_t n = v.size(), mid = n / 2;
    std::vector<std::uint32_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = static_cast<std::uint32_t>(i);
    std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return v[a] < v[b]; });
    std::vector<std::uint32_t> count(n);
    std::vector<double> medians;
    medians.reserve(static_cast<std::size_t>(resamples));
    for (int b = 0; b < resamples; ++b) {
        std::fill(count.begin(), count.end(), 0);
        for (std::size_t i = 0; i < n; ++i) ++count[std::min(n - 1, static_cast<std::size_t>(rng.uniform01() * static_cast<double>(n)))];
        // The values at sorted positions mid - 1 and mid of the resample.
        double lower = 0, upper = 0;
        std::size_t seen = 0, r = 0;
        for (; r < n; ++r) {
            const std::size_t before = seen;
            seen += count[order[r]];
            if (mid > 0 && before <= mid - 1 && seen > mid - 1) lower = v[order[r]];
            if (seen > mid) break;
        }
        upper = v[order[r]];
        medians.push_back(n % 2 ? upper : 0.5 * (lower + upper));
    }
    return {percentile(medians, (100 - level) / 2), percentile(medians, (100 + level) / 2)};
}

}  // namespace ffn
