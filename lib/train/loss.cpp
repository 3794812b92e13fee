#include "train/loss.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/math.h"
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
double cross_entropy_loss(const nn::Matrix<T>& logits, const nn::Matrix<T>& target, nn::Matrix<T>& grad) {
    const std::size_t rows = logits.shape()[0], classes = logits.shape()[1];
    if (target.shape()[0] != rows || target.shape()[1] != 1)
        throw Error("cross-entropy loss: targets must be one class index per row");
    nn::ensure_shape(grad, rows, classes);
    double total = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        const T* z = logits.data() + r * classes;
        T* g = grad.data() + r * classes;
        const auto label = static_cast<std::int64_t>(target(r, 0));
        if (label < 0 || static_cast<std::size_t>(label) >= classes || static_cast<T>(label) != target(r, 0))
            throw Error("cross-entropy loss: target " + std::to_string(target(r, 0)) + " in row " + std::to_string(r) +
                        " is not a class index below " + std::to_string(classes));
        T top = z[0];
        for (std::size_t c = 1; c < classes; ++c) top = std::max(top, z[c]);
        T sum = 0;
        for (std::size_t c = 0; c < classes; ++c) sum += static_cast<T>(math::exp(static_cast<double>(z[c] - top)));
        const T log_sum = top + static_cast<T>(math::log(static_cast<double>(sum)));
        total += static_cast<double>(log_sum - z[label]);
        for (std::size_t c = 0; c < classes; ++c) g[c] = static_cast<T>(math::exp(static_cast<double>(z[c] - log_sum))) / static_cast<T>(rows);
        g[label] -= T(1) / static_cast<T>(rows);
    }
    return total / static_cast<double>(rows);
}

template double mse_loss<float>(const nn::Matrix<float>&, const nn::Matrix<float>&, nn::Matrix<float>&);
template double mse_loss<double>(const nn::Matrix<double>&, const nn::Matrix<double>&, nn::Matrix<double>&);
template std::vector<double> batched_mse_loss<float>(const nn::Matrix<float>&, const nn::Matrix<float>&, std::size_t,
                                                     nn::Matrix<float>&);
template std::vector<double> batched_mse_loss<double>(const nn::Matrix<double>&, const nn::Matrix<double>&, std::size_t,
                                                      nn::Matrix<double>&);
template double cross_entropy_loss<float>(const nn::Matrix<float>&, const nn::Matrix<float>&, nn::Matrix<float>&);
template double cross_entropy_loss<double>(const nn::Matrix<double>&, const nn::Matrix<double>&, nn::Matrix<double>&);

}  // namespace ffn::train
