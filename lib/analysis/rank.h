#pragma once
// Numerical rank with numpy's matrix_rank rule: singular values above
// S.max * max(M, N) * eps count, eps being the machine epsilon of the
// matrix's own dtype (numpy uses finfo(M.dtype).eps). The SVD itself is
// always float64 (LAPACK through xtensor-blas).
#include <limits>
#include <vector>

#include "nn/tensor.h"

namespace ffn::analysis {

struct RankResult {
    int rank = 0;
    double tolerance = 0.0;
    std::vector<double> singular_values;  // descending
};

RankResult matrix_rank(const nn::Matrix<double>& M, double eps = std::numeric_limits<double>::epsilon());

// The same for a matrix of any scalar type: widened to float64 for the SVD,
// judged with its own type's epsilon.
template <class T>
RankResult matrix_rank_of(const nn::Matrix<T>& M) {
    return matrix_rank(xt::eval(xt::cast<double>(M)), std::numeric_limits<T>::epsilon());
}

}  // namespace ffn::analysis
