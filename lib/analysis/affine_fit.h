#pragma once
// The best affine map y ~ A x + c in the least-squares sense, from samples
// fed one at a time (a Monte Carlo stream need not be kept), in float64.
// It is the baseline a nonlinear block has to beat: what of a target, or
// of a readout, a plain affine map already explains.
//
// Sums are centred as they come (Welford's updates of the means and the
// co-moments), so inputs with a large mean lose no digits; the normal
// equations on the centred inputs are solved by Cholesky. An input with no
// variance of its own beyond the others' (a constant one, a copy) gets
// coefficient 0, its part going to c or to the others.
#include <cstddef>
#include <span>
#include <vector>

#include "nn/tensor.h"

namespace ffn::analysis {

class AffineFit {
public:
    AffineFit(std::size_t inputs, std::size_t outputs);
    void add(std::span<const double> x, std::span<const double> y);

    struct Map {
        std::vector<double> A;  // outputs x inputs, row-major
        std::vector<double> c;  // outputs
        void apply(std::span<const double> x, std::span<double> y) const;
    };
    // The least-squares map over the samples so far.
    Map solve() const;
    // Its residual and the targets' total sum of squares about their mean,
    // over all outputs, from the sums (a target fitted to rounding leaves a
    // residual near rounding times the total: recompute it from the data
    // where that matters).
    double residual_sum_of_squares() const;
    double total_sum_of_squares() const;
    std::size_t samples() const { return n_; }

private:
    std::size_t in_, out_, n_ = 0;
    std::vector<double> mean_x_, mean_y_;
    std::vector<double> cxx_;  // in x in co-moments of x
    std::vector<double> cxy_;  // in x out co-moments of x and y
    std::vector<double> syy_;  // out: each output's sum of squares about its mean
    std::vector<double> dx_, dy_;  // add()'s scratch
};

// The fit over the rows of X (samples x inputs) and Y (samples x outputs).
template <class T>
AffineFit fit_rows(const nn::Matrix<T>& X, const nn::Matrix<T>& Y) {
    const std::size_t rows = X.shape()[0], in = X.shape()[1], out = Y.shape()[1];
    AffineFit fit(in, out);
    std::vector<double> x(in), y(out);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t i = 0; i < in; ++i) x[i] = static_cast<double>(X(r, i));
        for (std::size_t j = 0; j < out; ++j) y[j] = static_cast<double>(Y(r, j));
        fit.add(x, y);
    }
    return fit;
}

// The sum of squares of Y - (X A^T + c) over every element, from the data.
template <class T>
double residual_sum_of_squares(const AffineFit::Map& map, const nn::Matrix<T>& X, const nn::Matrix<T>& Y) {
    const std::size_t rows = X.shape()[0], in = X.shape()[1], out = Y.shape()[1];
    std::vector<double> x(in), y(out);
    double total = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t i = 0; i < in; ++i) x[i] = static_cast<double>(X(r, i));
        map.apply(x, y);
        for (std::size_t j = 0; j < out; ++j) total += (static_cast<double>(Y(r, j)) - y[j]) * (static_cast<double>(Y(r, j)) - y[j]);
    }
    return total;
}

}  // namespace ffn::analysis
