#include <doctest/doctest.h>

#include "analysis/rank.h"

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
