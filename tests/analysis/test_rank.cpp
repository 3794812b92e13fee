#include <doctest/doctest.h>

#include "analysis/rank.h"

#include <cmath>

#include "core/rng.h"

TEST_CASE("matrix_rank follows numpy's rule") {
    const ffn::nn::Matrix<double> full = {{1, 0}, {0, 1}, {1, 1}};
    CHECK(ffn::analysis::matrix_rank(full).rank == 2);
    const ffn::nn::Matrix<double> one = {{1, 2, 3}, {2, 4, 6}};
    const auto r = ffn::analysis::matrix_rank(one);
    CHECK(r.rank == 1);
    // tol = S.max * max(M, N) * eps
    CHECK(r.tolerance == doctest::Approx(r.singular_values[0] * 3 * 2.220446049250313e-16));
    const ffn::nn::Matrix<double> zero = {{0, 0}, {0, 0}};
    CHECK(ffn::analysis::matrix_rank(zero).rank == 0);
}

TEST_CASE("a float32 matrix is judged with float32's epsilon as numpy does") {
    // A rank-16 product formed in float32 carries float32 rounding in every
    // entry: float64's epsilon would count that noise as 48 more directions.
    ffn::nn::Matrix<float> A = ffn::nn::Matrix<float>::from_shape({64, 16}), B = ffn::nn::Matrix<float>::from_shape({16, 64});
    ffn::Rng rng(5);
    for (auto& a : A) a = static_cast<float>(rng.normal());
    for (auto& b : B) b = static_cast<float>(rng.normal());
    ffn::nn::Matrix<float> P = xt::zeros<float>({64, 64});
    for (std::size_t r = 0; r < 64; ++r)
        for (std::size_t k = 0; k < 16; ++k)
            for (std::size_t c = 0; c < 64; ++c) P(r, c) += A(r, k) * B(k, c);
    CHECK(ffn::analysis::matrix_rank_of(P).rank == 16);
    CHECK(ffn::analysis::matrix_rank(xt::eval(xt::cast<double>(P))).rank > 16);
}
