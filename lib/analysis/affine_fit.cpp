#include "analysis/affine_fit.h"

#include <cmath>
#include <stdexcept>

namespace ffn::analysis {

AffineFit::AffineFit(std::size_t inputs, std::size_t outputs)
    : in_(inputs), out_(outputs), mean_x_(inputs, 0.0), mean_y_(outputs, 0.0), cxx_(inputs * inputs, 0.0),
      cxy_(inputs * outputs, 0.0), syy_(outputs, 0.0), dx_(inputs), dy_(outputs) {}

void AffineFit::add(std::span<const double> x, std::span<const double> y) {
    if (x.size() != in_ || y.size() != out_) throw std::logic_error("AffineFit::add: a sample of the wrong size");
    ++n_;
    const double n = static_cast<double>(n_);
    // Welford: with dx = x - old mean and the new mean m', the co-moment
    // of (u, v) grows by du (v - m'_v).
    std::vector<double>&dx = dx_, &dy = dy_;
    for (std::size_t i = 0; i < in_; ++i) {
        dx[i] = x[i] - mean_x_[i];
        mean_x_[i] += dx[i] / n;
    }
    for (std::size_t j = 0; j < out_; ++j) {
        dy[j] = y[j] - mean_y_[j];
        mean_y_[j] += dy[j] / n;
        syy_[j] += dy[j] * (y[j] - mean_y_[j]);
    }
    for (std::size_t i = 0; i < in_; ++i) {
        for (std::size_t k = 0; k < in_; ++k) cxx_[i * in_ + k] += dx[i] * (x[k] - mean_x_[k]);
        for (std::size_t j = 0; j < out_; ++j) cxy_[i * out_ + j] += dx[i] * (y[j] - mean_y_[j]);
    }
}

AffineFit::Map AffineFit::solve() const {
    // Cholesky of Cxx = L L^T, a direction dropped when its pivot (what of
    // its variance the earlier inputs leave) vanishes beside its own
    // variance: a constant input, or one the others determine. Relative to
    // itself, so that an input's scale decides nothing.
    std::vector<double> L(in_ * in_, 0.0);
    std::vector<bool> dropped(in_, false);
    for (std::size_t i = 0; i < in_; ++i) {
        for (std::size_t k = 0; k <= i; ++k) {
            double s = cxx_[i * in_ + k];
            for (std::size_t p = 0; p < k; ++p) s -= L[i * in_ + p] * L[k * in_ + p];
            if (k < i) {
                L[i * in_ + k] = dropped[k] ? 0.0 : s / L[k * in_ + k];
            } else if (s > 1e-12 * cxx_[i * in_ + i] && s > 0) {
                L[i * in_ + i] = std::sqrt(s);
            } else {
                dropped[i] = true;
            }
        }
    }
    Map m{std::vector<double>(out_ * in_, 0.0), mean_y_};
    std::vector<double> z(in_);
    for (std::size_t j = 0; j < out_; ++j) {
        // Cxx a_j = Cxy[:, j]: forward then back substitution.
        for (std::size_t i = 0; i < in_; ++i) {
            if (dropped[i]) { z[i] = 0; continue; }
            double s = cxy_[i * out_ + j];
            for (std::size_t p = 0; p < i; ++p) s -= L[i * in_ + p] * z[p];
            z[i] = s / L[i * in_ + i];
        }
        for (std::size_t i = in_; i-- > 0;) {
            if (dropped[i]) { m.A[j * in_ + i] = 0; continue; }
            double s = z[i];
            for (std::size_t p = i + 1; p < in_; ++p) s -= L[p * in_ + i] * m.A[j * in_ + p];
            m.A[j * in_ + i] = s / L[i * in_ + i];
        }
        for (std::size_t i = 0; i < in_; ++i) m.c[j] -= m.A[j * in_ + i] * mean_x_[i];
    }
    return m;
}

void AffineFit::Map::apply(std::span<const double> x, std::span<double> y) const {
    const std::size_t in = x.size();
    for (std::size_t j = 0; j < y.size(); ++j) {
        double s = c[j];
        for (std::size_t i = 0; i < in; ++i) s += A[j * in + i] * x[i];
        y[j] = s;
    }
}

double AffineFit::residual_sum_of_squares() const {
    // Per output: Syy - a . Cxy[:, j], the explained part removed.
    const Map m = solve();
    double total = 0;
    for (std::size_t j = 0; j < out_; ++j) {
        double explained = 0;
        for (std::size_t i = 0; i < in_; ++i) explained += m.A[j * in_ + i] * cxy_[i * out_ + j];
        total += std::max(0.0, syy_[j] - explained);
    }
    return total;
}

double AffineFit::total_sum_of_squares() const {
    double total = 0;
    for (double s : syy_) total += s;
    return total;
}

}  // namespace ffn::analysis
