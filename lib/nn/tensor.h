#pragma once
// Storage types of the nn layer: row-major xtensor containers. Batches are one
// token per row, as in PyTorch.
#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include <xtensor/xtensor.hpp>
#include <xtensor/xview.hpp>

#include "core/memory.h"

namespace ffn::nn {

template <class T>
using Matrix = xt::xtensor<T, 2>;
template <class T>
using Vector = xt::xtensor<T, 1>;

// A tensor of zeros by std::fill on huge pages where the kernel gives them:
// xt::zeros assigns through a broadcast expression, one element at a time,
// and a large layer's first touch took a page fault per 4 KB; counting a
// 4096 x 14336 layer was mostly those two.
template <class T, std::size_t N>
xt::xtensor<T, N> zeros(const std::array<std::size_t, N>& shape) {
    auto t = xt::xtensor<T, N>::from_shape(shape);
    ffn::prefer_huge_pages(t.data(), t.size() * sizeof(T));
    t.fill(T{0});
    return t;
}

// From configs, which hold float64 lists.
template <class T>
Matrix<T> to_matrix(const std::vector<std::vector<double>>& rows) {
    Matrix<T> M = Matrix<T>::from_shape({rows.size(), rows.empty() ? 0 : rows[0].size()});
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t c = 0; c < rows[r].size(); ++c) M(r, c) = static_cast<T>(rows[r][c]);
    return M;
}

template <class T>
Vector<T> to_vector(const std::vector<double>& values) {
    Vector<T> v = Vector<T>::from_shape({values.size()});
    for (std::size_t i = 0; i < values.size(); ++i) v(i) = static_cast<T>(values[i]);
    return v;
}

// Row r of a batch as a vector.
template <class T>
Vector<T> row_of(const Matrix<T>& M, std::size_t r = 0) {
    return xt::eval(xt::view(M, r, xt::all()));
}

// One input vector as a one-token batch.
template <class T>
Matrix<T> as_row(const Vector<T>& v) {
    Matrix<T> X = Matrix<T>::from_shape({std::size_t{1}, v.size()});
    std::copy(v.begin(), v.end(), X.begin());
    return X;
}

// Largest |a - b| and |a| over all elements, in float64.
template <class T>
double max_abs_difference(const Matrix<T>& a, const Matrix<T>& b) {
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(a.data()[i]) - static_cast<double>(b.data()[i])));
    return worst;
}

template <class T>
double max_abs(const Matrix<T>& a) {
    double worst = 0;
    for (auto x : a) worst = std::max(worst, std::fabs(static_cast<double>(x)));
    return worst;
}

}  // namespace ffn::nn
