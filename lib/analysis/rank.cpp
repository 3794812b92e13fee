#include "analysis/rank.h"

#include <algorithm>
#include <limits>
#include <xtensor-blas/xlinalg.hpp>

namespace ffn::analysis {

RankResult matrix_rank(const nn::Matrix<double>& M, double eps) {
    RankResult r;
    if (M.size() == 0) return r;
    const auto [U, S, Vt] = xt::linalg::svd(M, /*full_matrices=*/false, /*compute_uv=*/false);
    r.singular_values.assign(S.begin(), S.end());
    std::sort(r.singular_values.rbegin(), r.singular_values.rend());
    const double largest = r.singular_values.front();
    r.tolerance = largest * static_cast<double>(std::max(M.shape()[0], M.shape()[1])) *
                  eps;
    r.rank = static_cast<int>(std::count_if(r.singular_values.begin(), r.singular_values.end(),
                                            [&](double s) { return s > r.tolerance; }));
    return r;
}

}  // namespace ffn::analysis
