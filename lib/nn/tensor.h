#pragma once
// Storage types of the nn layer: row-major xtensor containers. Batches are one
// token per row, as in PyTorch.
#include <xtensor/xtensor.hpp>

namespace ffn::nn {

template <class T>
using Matrix = xt::xtensor<T, 2>;
template <class T>
using Vector = xt::xtensor<T, 1>;

}  // namespace ffn::nn
