#pragma once
// Losses over a batch, each returning the loss and writing dL/dY.
#include <vector>

#include "nn/tensor.h"

namespace ffn::train {

// Mean over every element of (y - t)^2, as PyTorch's MSELoss(reduction="mean").
// grad = 2 (y - t) / count.
template <class T>
double mse_loss(const nn::Matrix<T>& Y, const nn::Matrix<T>& target, nn::Matrix<T>& grad);

// The same for a stack of `instances` equal slices of Y (nn/batched.h):
// each instance's loss, and each slice of grad, as mse_loss gives them for
// that instance alone.
template <class T>
std::vector<double> batched_mse_loss(const nn::Matrix<T>& Y, const nn::Matrix<T>& target, std::size_t instances,
                                     nn::Matrix<T>& grad);

// The targets' variance per column (about the column's mean, over rows),
// averaged over columns: the MSE of predicting each column's mean, the
// yardstick a normalised MSE divides by. Two passes, in float64.
template <class T>
double mean_column_variance(const nn::Matrix<T>& Y);

}  // namespace ffn::train
