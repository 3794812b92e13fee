// The affine baseline: exact on an affine target, and the same map as an
// independent least-squares solver (LAPACK's gelsd) on a nonlinear one.
#include <doctest/doctest.h>

#include <cmath>
#include <xtensor-blas/xlinalg.hpp>

#include "analysis/affine_fit.h"
#include "core/rng.h"

using namespace ffn;

TEST_CASE("AffineFit recovers an affine map exactly, and a far-off mean loses no digits") {
    Rng rng(7);
    const std::size_t n = 500, in = 3, out = 2;
    const double A[2][3] = {{1.5, -2, 0.25}, {0, 3, -1}}, c[2] = {1e6, -4};
    nn::Matrix<double> X = nn::Matrix<double>::from_shape({n, in}), Y = nn::Matrix<double>::from_shape({n, out});
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < in; ++i) X(r, i) = 1e4 + rng.normal();  // the mean far from 0
        for (std::size_t j = 0; j < out; ++j) {
            Y(r, j) = c[j];
            for (std::size_t i = 0; i < in; ++i) Y(r, j) += A[j][i] * X(r, i);
        }
    }
    const auto fit = analysis::fit_rows(X, Y);
    const auto map = fit.solve();
    // float64 with inputs of size 1e4 and an offset of 1e6: rounding of a
    // few 1e-16 relative, 1e-9 absolute on the coefficients is generous.
    for (std::size_t j = 0; j < out; ++j)
        for (std::size_t i = 0; i < in; ++i) CHECK(map.A[j * in + i] == doctest::Approx(A[j][i]).epsilon(1e-9));
    CHECK(map.c[0] == doctest::Approx(1e6).epsilon(1e-9));
    CHECK(analysis::residual_sum_of_squares(map, X, Y) < 1e-12 * fit.total_sum_of_squares());
}

TEST_CASE("AffineFit gives LAPACK's least-squares map and residual on a nonlinear target") {
    Rng rng(11);
    const std::size_t n = 400, in = 4, out = 3;
    nn::Matrix<double> X = nn::Matrix<double>::from_shape({n, in}), Y = nn::Matrix<double>::from_shape({n, out});
    xt::xtensor<double, 2> Z = xt::zeros<double>({n, in + 1}), B = xt::zeros<double>({n, out});
    for (std::size_t r = 0; r < n; ++r) {
        for (std::size_t i = 0; i < in; ++i) Z(r, i) = X(r, i) = rng.normal();
        Z(r, in) = 1;
        for (std::size_t j = 0; j < out; ++j) B(r, j) = Y(r, j) = std::tanh(X(r, j) * X(r, j + 1)) + 0.3 * X(r, 0);
    }
    const auto fit = analysis::fit_rows(X, Y);
    const auto map = fit.solve();
    const auto solved = xt::linalg::lstsq(Z, B);
    const auto& coef = std::get<0>(solved);  // (in + 1) x out
    // Two float64 solvers of a well-conditioned problem (Gaussian inputs):
    // they agree to about 1e-13; 1e-10 leaves room for the summation order.
    for (std::size_t j = 0; j < out; ++j) {
        for (std::size_t i = 0; i < in; ++i) CHECK(map.A[j * in + i] == doctest::Approx(coef(i, j)).epsilon(1e-10));
        CHECK(map.c[j] == doctest::Approx(coef(in, j)).epsilon(1e-10));
    }
    double lapack_sse = 0;
    for (double v : std::get<1>(solved)) lapack_sse += v;
    CHECK(fit.residual_sum_of_squares() == doctest::Approx(lapack_sse).epsilon(1e-10));
    CHECK(analysis::residual_sum_of_squares(map, X, Y) == doctest::Approx(lapack_sse).epsilon(1e-10));
}

TEST_CASE("AffineFit gives a constant input direction no coefficient") {
    analysis::AffineFit fit(2, 1);
    for (int k = 0; k < 10; ++k) {
        const double x[2] = {static_cast<double>(k), 5.0}, y[1] = {2.0 * k + 1};
        fit.add(x, y);
    }
    const auto map = fit.solve();
    CHECK(map.A[0] == doctest::Approx(2).epsilon(1e-12));
    CHECK(map.A[1] == 0);
    CHECK(map.c[0] == doctest::Approx(1).epsilon(1e-12));
}

TEST_CASE("AffineFit keeps an input of small scale beside one of large scale") {
    // Independent inputs of scale 1e4 and 1e-4, y depending on both: a
    // pivot judged against the largest variance would drop the small one.
    Rng rng(3);
    analysis::AffineFit fit(2, 1);
    for (int k = 0; k < 200; ++k) {
        const double x[2] = {1e4 * rng.normal(), 1e-4 * rng.normal()}, y[1] = {x[0] + 1e8 * x[1]};
        fit.add(x, y);
    }
    const auto map = fit.solve();
    // An exact fit; rounding of the 1e8 coefficient's products, 1e-8 relative.
    CHECK(map.A[0] == doctest::Approx(1).epsilon(1e-8));
    CHECK(map.A[1] == doctest::Approx(1e8).epsilon(1e-8));
    CHECK(fit.residual_sum_of_squares() < 1e-12 * fit.total_sum_of_squares());
}
