#include "train/loss.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "nn/module.h"

namespace ffn::train {

namespace {
// The MSE of n values at y against t, and its gradient into g.
template <class T>
double mse_of(const T* y, const T* t, T* g, std::size_t n) {
    const T scale = T(2) / static_cast<T>(n);
    // Four running sums (element i into sum i mod 4), so the adds do not wait
    // on each other: one chain made this loop latency-bound.
    double sum[4] = {0, 0, 0, 0};
    std::size_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (std::size_t l = 0; l < 4; ++l) {
            const T diff = y[i + l] - t[i + l];
            sum[l] += static_cast<double>(diff) * static_cast<double>(diff);
            g[i + l] = scale * diff;
        }
    for (std::size_t l = 0; i < n; ++i, ++l) {
        const T diff = y[i] - t[i];
        sum[l] += static_cast<double>(diff) * static_cast<double>(diff);
        g[i] = scale * diff;
    }
    return ((sum[0] + sum[1]) + (sum[2] + sum[3])) / static_cast<double>(n);
}
}  // namespace

template <class T>
double mse_loss(const nn::Matrix<T>& Y, const nn::Matrix<T>& target, nn::Matrix<T>& grad) {
    if (Y.shape() != target.shape()) throw Error("mse loss: output and target shapes differ");
    nn::ensure_shape(grad, Y.shape()[0], Y.shape()[1]);
    return mse_of(Y.data(), target.data(), grad.data(), Y.size());
}

template <class T>
std::vector<double> batched_mse_loss(const nn::Matrix<T>& Y, const nn::Matrix<T>& target, std::size_t instances,
                                     nn::Matrix<T>& grad) {
    if (Y.shape() != target.shape()) throw Error("mse loss: output and target shapes differ");
    if (instances < 1 || Y.shape()[0] % instances != 0) throw Error("mse loss: the stack does not split into the instances");
    nn::ensure_shape(grad, Y.shape()[0], Y.shape()[1]);
    const std::size_t each = Y.size() / instances;
    std::vector<double> losses(instances);
    for (std::size_t i = 0; i < instances; ++i)
        losses[i] = mse_of(Y.data() + i * each, target.data() + i * each, grad.data() + i * each, each);
    return losses;
}

template <class T>
double mean_column_variance(const nn::Matrix<T>& Y) {
    const std::size_t rows = Y.shape()[0], cols = Y.shape()[1];
    if (rows == 0 || cols == 0) return 0.0;
    double total = 0;
    for (std::size_t i = 0; i < cols; ++i) {
        double mean = 0, square = 0;
        for (std::size_t r = 0; r < rows; ++r) mean += static_cast<double>(Y(r, i));
        mean /= static_cast<double>(rows);
        for (std::size_t r = 0; r < rows; ++r) square += (static_cast<double>(Y(r, i)) - mean) * (static_cast<double>(Y(r, i)) - mean);
        total += square / static_cast<double>(rows);
    }
    return total / static_cast<double>(cols);
}

template double mean_column_variance<float>(const nn::Matrix<float>&);
template double mean_column_variance<double>(const nn::Matrix<double>&);
template double mse_loss<float>(const nn::Matrix<float>&, const nn::Matrix<float>&, nn::Matrix<float>&);
template double mse_loss<double>(const nn::Matrix<double>&, const nn::Matrix<double>&, nn::Matrix<double>&);
template std::vector<double> batched_mse_loss<float>(const nn::Matrix<float>&, const nn::Matrix<float>&, std::size_t,
                                                     nn::Matrix<float>&);
template std::vector<double> batched_mse_loss<double>(const nn::Matrix<double>&, const nn::Matrix<double>&, std::size_t,
                                                      nn::Matrix<double>&);

}  // namespace ffn::train
