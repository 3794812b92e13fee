#include "analysis/kinks.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ffn::analysis {

int kinks_inside(const std::vector<double>& w, const std::vector<double>& b, double lo, double hi) {
    int n = 0;
    for (std::size_t j = 0; j < w.size(); ++j) {
        const double at = kink_at(w[j], b[j]);
        if (at > lo && at < hi) ++n;
    }
    return n;
}

int slope_changes(const std::vector<double>& y, double dx, double tolerance) {
    int n = 0;
    bool in_change = false;
    for (std::size_t k = 2; k < y.size(); ++k) {
        const double before = (y[k - 1] - y[k - 2]) / dx, after = (y[k] - y[k - 1]) / dx;
        const bool change = std::fabs(after - before) > tolerance;
        if (change && !in_change) ++n;
        in_change = change;
    }
    return n;
}

double piecewise_linear_lower_bound(const std::vector<double>& x, const std::vector<double>& y, int pieces) {
    const std::size_t n = x.size();
    if (n == 0) return 0.0;
    // Prefix sums give each segment's least-squares line in O(1).
    std::vector<double> sx(n + 1), sy(n + 1), sxx(n + 1), sxy(n + 1), syy(n + 1);
    for (std::size_t i = 0; i < n; ++i) {
        sx[i + 1] = sx[i] + x[i];
        sy[i + 1] = sy[i] + y[i];
        sxx[i + 1] = sxx[i] + x[i] * x[i];
        sxy[i + 1] = sxy[i] + x[i] * y[i];
        syy[i + 1] = syy[i] + y[i] * y[i];
    }
    // Residual sum of squares of the best line through samples [i, j).
    auto sse = [&](std::size_t i, std::size_t j) {
        const double c = static_cast<double>(j - i);
        const double mx = (sx[j] - sx[i]) / c, my = (sy[j] - sy[i]) / c;
        const double vxx = (sxx[j] - sxx[i]) - c * mx * mx;
        const double vxy = (sxy[j] - sxy[i]) - c * mx * my;
        const double vyy = (syy[j] - syy[i]) - c * my * my;
        const double rest = vxx > 1e-300 ? vyy - vxy * vxy / vxx : vyy;
        return std::max(0.0, rest);
    };
    const std::size_t k_max = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, pieces)), n);
    const double inf = std::numeric_limits<double>::infinity();
    // best[j]: least error covering samples [0, j) with the pieces used so far.
    std::vector<double> best(n + 1, inf), next(n + 1, inf);
    for (std::size_t j = 1; j <= n; ++j) best[j] = sse(0, j);
    if (k_max < 2) return std::sqrt(best[n] / static_cast<double>(n));
    // Every pass reads the same segment errors: tabulate them once, column j
    // holding sse(i, j) for i < j.
    std::vector<double> table(n * (n + 1) / 2);
    auto column = [&](std::size_t j) { return table.data() + (j - 1) * j / 2; };
    for (std::size_t j = 1; j <= n; ++j)
        for (std::size_t i = 0; i < j; ++i) column(j)[i] = sse(i, j);
    for (std::size_t k = 2; k <= k_max; ++k) {
        std::fill(next.begin(), next.end(), inf);
        for (std::size_t j = k; j <= n; ++j) {
            const double* e = column(j);
            double least = inf;
            for (std::size_t i = k - 1; i < j; ++i) least = std::min(least, best[i] + e[i]);
            next[j] = least;
        }
        std::swap(best, next);
    }
    return std::sqrt(best[n] / static_cast<double>(n));
}

}  // namespace ffn::analysis
