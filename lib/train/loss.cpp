#include "train/loss.h"

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/math.h"
#include "nn/module.h"

namespace ffn::train {

template <class T>
double mse_loss(const nn::Matrix<T>& Y, const nn::Matrix<T>& target, nn::Matrix<T>& grad) {
    if (Y.shape() != target.shape()) throw Error("mse loss: output and target shapes differ");
    nn::ensure_shape(grad, Y.shape()[0], Y.shape()[1]);
    const T scale = T(2) / static_cast<T>(Y.size());
    // Four running sums (element i into sum i mod 4), so the adds do not wait
    // on each other: one chain made this loop latency-bound.
    double sum[4] = {0, 0, 0, 0};
    const std::size_t n = Y.size();
    const T *y = Y.data(), *t = target.data();
    T* g = grad.data();
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
template double cross_entropy_loss<float>(const nn::Matrix<float>&, const nn::Matrix<float>&, nn::Matrix<float>&);
template double cross_entropy_loss<double>(const nn::Matrix<double>&, const nn::Matrix<double>&, nn::Matrix<double>&);

}  // namespace ffn::train
