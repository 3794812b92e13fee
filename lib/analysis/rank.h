#pragma once
// Numerical rank with numpy's matrix_rank rule: singular values above
// S.max * max(M, N) * eps count. Always computed in float64 (LAPACK through
// xtensor-blas), whatever the dtype of the model it comes from.
#include <vector>

#include "nn/tensor.h"

namespace ffn::analysis {

struct RankResult {
    int rank = 0;
    double tolerance = 0.0;
    std::vector<double> singular_values;  // descending
};

RankResult matrix_rank(const nn::Matrix<double>& M);

// The same for a matrix of another scalar type, widened to float64 first.
template <class T>
RankResult matrix_rank_of(const nn::Matrix<T>& M) {
    return matrix_rank(xt::eval(xt::cast<double>(M)));
}

}  // namespace ffn::analysis
