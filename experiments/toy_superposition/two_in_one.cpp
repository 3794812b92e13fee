#include "experiments/toy_superposition/two_in_one.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

namespace ffn::experiments::toy_superposition {

namespace {

double relu(double v) { return v > 0 ? v : 0; }

// Integral over y in [0, 1) of (x - ReLU(z + s y))^2: the output's
// pre-activation is linear in the other feature y, so the integrand is x^2
// where it is cut and a quadratic elsewhere.
double over_other(double x, double z, double s) {
    if (std::fabs(s) < 1e-3) {
        // The closed form below divides a difference of cubes by s, which
        // cancels catastrophically for a small slope: the midpoint rule
        // instead (the integrand then barely varies).
        constexpr int kSteps = 16;
        double sum = 0;
        for (int j = 0; j < kSteps; ++j) {
            const double e = x - relu(z + s * (j + 0.5) / kSteps);
            sum += e * e;
        }
        return sum / kSteps;
    }
    const double r = -z / s;  // where z + s y crosses zero
    const double y1 = s > 0 ? std::clamp(r, 0.0, 1.0) : 0.0, y2 = s > 0 ? 1.0 : std::clamp(r, 0.0, 1.0);
    const double k = x - z;
    const double cube1 = (k - s * y1) * (k - s * y1) * (k - s * y1), cube2 = (k - s * y2) * (k - s * y2) * (k - s * y2);
    return x * x * (1 - (y2 - y1)) + (cube1 - cube2) / (3 * s);
}

// The integral over [0, 1] of f, a polynomial of degree at most 5 between
// the kinks `kinks`: Gauss and Legendre's three nodes on each piece, which
// are exact for such a polynomial.
template <class F>
double piecewise_integral(const F& f, std::array<double, 2> kinks) {
    for (double& k : kinks) k = k > 0 && k < 1 ? k : 1;  // a kink outside (0, 1), or none (NaN), splits nothing
    std::sort(kinks.begin(), kinks.end());
    constexpr double kNode = 0.7745966692414834;  // sqrt(3/5)
    double sum = 0, from = 0;
    for (const double to : {kinks[0], kinks[1], 1.0}) {
        if (!(to > from)) continue;
        const double mid = (from + to) / 2, half = (to - from) / 2;
        sum += half * (5 * f(mid - half * kNode) + 8 * f(mid) + 5 * f(mid + half * kNode)) / 9;
        from = to;
    }
    return sum;
}

// E[e^2] of one feature whose output is ReLU(u x + s y + beta), x its own
// value and y the other's, each active with probability p. Over x the
// error is piecewise quadratic (alone) or cubic (with y integrated out),
// kinked where u x + beta crosses 0 and -s: integrated exactly on the
// pieces. (For |s| < 1e-3, over_other's own midpoint rule adds kinks
// between those two, within 1e-3 / u of each other.)
double feature_error(double u, double s, double beta, double p) {
    const double q = 1 - p;
    const double none = std::numeric_limits<double>::quiet_NaN();
    const std::array<double, 2> kinks = u != 0 ? std::array<double, 2>{-beta / u, (-beta - s) / u} : std::array<double, 2>{none, none};
    const double own_alone = piecewise_integral([&](double x) { return (x - relu(u * x + beta)) * (x - relu(u * x + beta)); }, kinks);
    const double both = piecewise_integral([&](double x) { return over_other(x, u * x + beta, s); }, kinks);
    return q * (q * relu(beta) * relu(beta) + p * over_other(0, beta, s)) + p * (q * own_alone + p * both);
}

// Nelder and Mead's simplex: the least f found from `start`.
double least(const std::function<double(const std::array<double, 4>&)>& f, std::array<double, 4> start) {
    constexpr int kDim = 4, kMaxEvaluations = 6000;
    std::array<std::array<double, 4>, kDim + 1> x;
    std::array<double, kDim + 1> fx;
    for (int v = 0; v <= kDim; ++v) {
        x[v] = start;
        if (v > 0) x[v][v - 1] += 0.25;
        fx[v] = f(x[v]);
    }
    int evaluations = kDim + 1;
    while (evaluations < kMaxEvaluations) {
        std::array<int, kDim + 1> order;
        std::iota(order.begin(), order.end(), 0);
        std::sort(order.begin(), order.end(), [&](int a, int b) { return fx[a] < fx[b]; });
        const int best = order.front(), worst = order.back(), second = order[kDim - 1];
        if (fx[worst] - fx[best] < 1e-15) break;
        std::array<double, 4> centre{};
        for (int v = 0; v <= kDim; ++v)
            if (v != worst)
                for (int d = 0; d < kDim; ++d) centre[d] += x[v][d] / kDim;
        const auto along = [&](double t) {
            std::array<double, 4> y;
            for (int d = 0; d < kDim; ++d) y[d] = centre[d] + t * (x[worst][d] - centre[d]);
            return y;
        };
        const auto reflected = along(-1);
        const double fr = f(reflected);
        ++evaluations;
        if (fr < fx[best]) {
            const auto expanded = along(-2);
            const double fe = f(expanded);
            ++evaluations;
            if (fe < fr) x[worst] = expanded, fx[worst] = fe;
            else x[worst] = reflected, fx[worst] = fr;
        } else if (fr < fx[second]) {
            x[worst] = reflected, fx[worst] = fr;
        } else {
            const auto contracted = along(fr < fx[worst] ? -0.5 : 0.5);
            const double fc = f(contracted);
            ++evaluations;
            if (fc < std::min(fr, fx[worst])) {
                x[worst] = contracted, fx[worst] = fc;
            } else {
                for (int v = 0; v <= kDim; ++v)
                    if (v != best) {
                        for (int d = 0; d < kDim; ++d) x[v][d] = x[best][d] + 0.5 * (x[v][d] - x[best][d]);
                        fx[v] = f(x[v]);
                        ++evaluations;
                    }
            }
        }
    }
    return *std::min_element(fx.begin(), fx.end());
}

}  // namespace

double two_in_one_loss(const std::array<double, 4>& p, double importance1, double sparsity) {
    const double w0 = p[0], w1 = p[1], density = 1 - sparsity;
    return 0.5 * (feature_error(w0 * w0, w0 * w1, p[2], density) + importance1 * feature_error(w1 * w1, w0 * w1, p[3], density));
}

TwoInOne two_in_one_optimum(double importance1, double sparsity) {
    const double mean = (1 - sparsity) / 2;  // the best constant for a dropped feature
    // Each region as a map from unconstrained parameters: a represented
    // weight is 0.5 + |t|, a dropped one 0.5 tanh(t).
    const auto region = [&](auto weights, std::array<double, 4> start) {
        const auto f = [&](const std::array<double, 4>& t) {
            const auto [w0, w1] = weights(t[0], t[1]);
            return two_in_one_loss({w0, w1, t[2], t[3]}, importance1, sparsity);
        };
        double best = least(f, start);
        // A second start from the first's region but other biases.
        start[2] -= 0.2, start[3] -= 0.2;
        return std::min(best, least(f, start));
    };
    const auto kept = [](double t) { return 0.5 + std::fabs(t); };
    const auto dropped = [](double t) { return 0.5 * std::tanh(t); };
    TwoInOne out;
    out.dedicated0 = region([&](double a, double c) { return std::pair{kept(a), dropped(c)}; }, {0.5, 0, 0, mean});
    out.dedicated1 = region([&](double a, double c) { return std::pair{dropped(a), kept(c)}; }, {0, 0.5, mean, 0});
    out.antipodal = region([&](double a, double c) { return std::pair{kept(a), -kept(c)}; }, {0.5, 0.5, 0, 0});
    out.same_side = region([&](double a, double c) { return std::pair{kept(a), kept(c)}; }, {0.5, 0.5, 0, 0});
    const std::array<std::pair<double, const char*>, 4> phases{{{out.dedicated0, "feature 0 dedicated"},
                                                                  {out.dedicated1, "feature 1 dedicated"},
                                                                  {out.antipodal, "antipodal"},
                                                                  {out.same_side, "both, same side"}}};
    // Equal losses go to the first listed, not to a comparison of names.
    const auto& least_phase =
        *std::min_element(phases.begin(), phases.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    out.loss = least_phase.first;
    out.phase = least_phase.second;
    return out;
}

}  // namespace ffn::experiments::toy_superposition
