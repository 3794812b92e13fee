#include "analysis/kinks.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <set>

#include "analysis/jacobian.h"
#include "analysis/kernels/grid_kernels.h"
#include "core/isa.h"
#include "core/error.h"
#include <xtensor/xmath.hpp>

namespace ffn::analysis {

int kinks_inside(const std::vector<double>& w, const std::vector<double>& b, double lo, double hi) {
    int n = 0;
    for (std::size_t j = 0; j < w.size(); ++j) {
        const double at = kink_at(w[j], b[j]);
        if (at > lo && at < hi) ++n;
    }
    return n;
}

namespace {
// The registry's row for the dense-grid loops.
const PerIsa<kernels::GridFamily>& grid_builds() {
    static const PerIsa<kernels::GridFamily> table{kernels::avx512_grid(), kernels::avx2_grid(), kernels::ref_grid()};
    return table;
}
}  // namespace

int slope_changes(const std::vector<double>& y, double dx, double tolerance) {
    return grid_builds().active().slope_changes(y.data(), y.size(), dx, tolerance);
}

void relu_net_on_grid(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v, double c,
                      double lo, double dx, std::size_t points, std::vector<double>& y) {
    y.resize(points);
    grid_builds().active().relu_net(w.data(), b.data(), v.data(), w.size(), c, lo, dx, points, y.data());
}

namespace {

// y_k as the grid kernel computes it (kernels/grid_kernel.h): the units in
// order, every multiply and add rounded on its own.
double relu_net_at(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v, double c,
                   double lo, double dx, std::int64_t k) {
    const double x = lo + dx * static_cast<double>(static_cast<std::int32_t>(k));
    double y = c;
    for (std::size_t j = 0; j < w.size(); ++j) {
        const double z = w[j] * x + b[j];
        y = y + v[j] * (z > 0 ? z : 0.0);
    }
    return y;
}

constexpr double kUnit = 0x1p-53;      // the unit roundoff of float64
constexpr double kTiny = 0x1p-1074;    // an underflow's absolute error

}  // namespace

// The bound, with x*_k = lo + k dx exact and f the net in exact arithmetic,
// X bounding |x_k| and D = (points - 1) dx the grid's span:
// - |x_k - x*_k| <= u (D + X), from the product and the sum;
// - a unit's z, relu (1-Lipschitz) and v-product then err by at most
//   u |v_j| (|w_j| (D + 4 X) + 3 |b_j|), and the m sums add m u of
//   A = |c| + sum_j |v_j| (|w_j| X + |b_j|): |y_k - f(x*_k)| <= E.
// Where no kink lies strictly between x*_{k-1} and x*_{k+1}, f's slopes
// there are one slope s (|s| <= sum_j |w_j v_j|), so the grid's slope change
// at k is at most 4 E / dx from y plus 4 u |s| from the two divisions and
// the subtraction. Underflow adds kTiny-sized terms. Each factor below is
// rounded up generously; the test asks for half the tolerance.
bool relu_grid_noise_below(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v,
                           double c, double lo, double dx, std::size_t points, double tolerance) {
    if (points < 3 || !(dx > 0) || !std::isfinite(dx) || !std::isfinite(lo) || !std::isfinite(c)) return false;
    if (w.size() != b.size() || w.size() != v.size()) return false;
    const double D = dx * static_cast<double>(points - 1);
    const double X = std::max(std::fabs(lo), std::fabs(lo + D)) * (1 + 8 * kUnit);
    double A = std::fabs(c), units = 0, S = 0;
    for (std::size_t j = 0; j < w.size(); ++j) {
        A += std::fabs(v[j]) * (std::fabs(w[j]) * X + std::fabs(b[j]));
        units += std::fabs(v[j]) * (std::fabs(w[j]) * (D + 4 * X) + 3 * std::fabs(b[j]));
        S += std::fabs(w[j] * v[j]);
    }
    const double m = static_cast<double>(w.size());
    const double E = (kUnit * (units + m * A) + (4 * m + 16) * kTiny) * 1.25;
    const double noise = (4 * E / dx + 8 * kUnit * S + 16 * kTiny) * 1.25;
    return std::isfinite(noise) && noise < 0.5 * tolerance;
}

int relu_net_slope_changes(const std::vector<double>& w, const std::vector<double>& b, const std::vector<double>& v,
                           double c, double lo, double dx, std::size_t points, double tolerance) {
    if (points < 3) return 0;
    const auto whole_grid = [&] {
        thread_local std::vector<double> y;  // kept from run to run: a fresh 320 KB is a page fault per 4 KB
        relu_net_on_grid(w, b, v, c, lo, dx, points, y);
        return slope_changes(y, dx, tolerance);
    };
    if (!relu_grid_noise_below(w, b, v, c, lo, dx, points, tolerance)) return whole_grid();
    // The grid indices k whose neighbours x*_{k-1}, x*_{k+1} may hold a
    // kink: kappa = (t - lo) / dx computed to within a margin h, and
    // k - 1 < kappa < k + 1.
    const auto last = static_cast<double>(points - 2);
    thread_local std::vector<std::int64_t> near;  // the thread's, kept from run to run
    near.clear();
    for (std::size_t j = 0; j < w.size(); ++j) {
        if (w[j] == 0.0) continue;  // a constant unit bends nothing
        const double t = -b[j] / w[j];
        const double kappa = (t - lo) / dx;
        if (!std::isfinite(kappa)) {
            if (std::isnan(kappa)) return whole_grid();
            continue;  // infinitely far outside the grid
        }
        const double h = 1 + std::ceil(4 * kUnit * ((std::fabs(t) + std::fabs(lo)) / dx + std::fabs(kappa)));
        if (!(h < 64)) return whole_grid();
        if (kappa + h + 2 < 1 || kappa - h - 2 > last) continue;
        const double from = std::max(1.0, std::floor(kappa) - h - 1), to = std::min(last, std::floor(kappa) + h + 2);
        for (auto k = static_cast<std::int64_t>(from); k <= static_cast<std::int64_t>(to); ++k) near.push_back(k);
    }
    std::sort(near.begin(), near.end());
    near.erase(std::unique(near.begin(), near.end()), near.end());
    // Everywhere else the slope change is below the tolerance (the bound):
    // not a change, as in slope_changes.
    // A run of neighbouring k reuses two of its three points.
    int n = 0;
    std::int64_t previous = -1;
    bool previous_changed = false;
    double y0 = 0, y1 = 0, y2 = 0;
    for (const std::int64_t k : near) {
        if (k == previous + 1) {
            y0 = y1;
            y1 = y2;
        } else {
            y0 = relu_net_at(w, b, v, c, lo, dx, k - 1);
            y1 = relu_net_at(w, b, v, c, lo, dx, k);
        }
        y2 = relu_net_at(w, b, v, c, lo, dx, k + 1);
        const double s0 = (y1 - y0) / dx, s1 = (y2 - y1) / dx;
        const bool changed = std::fabs(s1 - s0) > tolerance;
        n += changed && !(previous == k - 1 && previous_changed);
        previous = k;
        previous_changed = changed;
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

// Between two known breakpoints every earlier layer is linear, so a unit's
// pre-activation is linear there and crosses zero at most once, where
// interpolation puts it. Then the slope of each interval (the Jacobian at
// its midpoint) is compared with the next: a piece ends where they differ
// by more than 1e-9 of the largest slope, far above the float64 rounding
// of these products and far below the slope change of any unit with
// weights of order one.
std::int64_t linear_pieces(const nn::MLP<double>& net, double lo, double hi) {
    if (net.layers.front().in_features() != 1 || net.layers.back().out_features() != 1 || net.activation != nn::Activation::relu)
        throw Error("linear_pieces: a ReLU net with one input and one output");
    std::set<double> points = {lo, hi};
    for (std::size_t k = 0; k + 1 < net.layers.size(); ++k) {
        const std::vector<double> x(points.begin(), points.end());
        nn::Matrix<double> H = nn::Matrix<double>::from_shape({x.size(), std::size_t{1}});
        std::copy(x.begin(), x.end(), H.begin());
        for (std::size_t i = 0; i < k; ++i) H = xt::maximum(nn::apply(net.layers[i], H), 0.0);
        const nn::Matrix<double> Z = nn::apply(net.layers[k], H);
        for (std::size_t j = 0; j < Z.shape()[1]; ++j)
            for (std::size_t i = 0; i + 1 < x.size(); ++i)
                if (Z(i, j) * Z(i + 1, j) < 0) points.insert(x[i] + Z(i, j) / (Z(i, j) - Z(i + 1, j)) * (x[i + 1] - x[i]));
    }
    const std::vector<double> x(points.begin(), points.end());
    std::vector<double> slope;
    for (std::size_t i = 0; i + 1 < x.size(); ++i)
        slope.push_back(mlp_jacobian(net, nn::Vector<double>{0.5 * (x[i] + x[i + 1])})(0, 0));
    double largest = 0;
    for (double v : slope) largest = std::max(largest, std::fabs(v));
    std::int64_t changes = 0;
    for (std::size_t i = 0; i + 1 < slope.size(); ++i) changes += std::fabs(slope[i + 1] - slope[i]) > 1e-9 * largest;
    return changes + 1;
}

}  // namespace ffn::analysis
