#include "nn/norm.h"

#include <cmath>

namespace ffn::nn {

// ---------------------------------------------------------------------------
// LayerNorm: xhat = (x - mean) / sqrt(var + eps) (biased variance), y = w xhat + b.
// Backward per row (N features, g = dy * w):
//   dx = rstd / N * (N g - sum(g) - xhat * sum(g xhat))

template <class T>
LayerNorm<T>::LayerNorm(std::size_t d, double eps_)
    : weight(xt::ones<T>({d})), bias(xt::zeros<T>({d})), weight_grad(xt::zeros<T>({d})), bias_grad(xt::zeros<T>({d})),
      eps(eps_) {}

template <class T>
const Matrix<T>& LayerNorm<T>::forward(const Matrix<T>& X) {
    const std::size_t rows = X.shape()[0], d = X.shape()[1];
    ensure_shape(xhat_, rows, d);
    ensure_shape(out_, rows, d);
    if (rstd_.size() != rows) rstd_ = Vector<T>::from_shape({rows});
    for (std::size_t r = 0; r < rows; ++r) {
        const T* x = X.data() + r * d;
        T mean = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x[j];
        mean /= T(d);
        T var = 0;
        for (std::size_t j = 0; j < d; ++j) var += (x[j] - mean) * (x[j] - mean);
        var /= T(d);
        const T rstd = T(1) / std::sqrt(var + T(eps));
        rstd_(r) = rstd;
        T* xh = xhat_.data() + r * d;
        T* y = out_.data() + r * d;
        for (std::size_t j = 0; j < d; ++j) {
            xh[j] = (x[j] - mean) * rstd;
            y[j] = weight(j) * xh[j] + bias(j);
        }
    }
    return out_;
}

template <class T>
const Matrix<T>& LayerNorm<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    const std::size_t rows = dY.shape()[0], d = dY.shape()[1];
    std::fill(weight_grad.begin(), weight_grad.end(), T(0));
    std::fill(bias_grad.begin(), bias_grad.end(), T(0));
    if (need_input_grad) ensure_shape(input_grad_, rows, d);
    for (std::size_t r = 0; r < rows; ++r) {
        const T* dy = dY.data() + r * d;
        const T* xh = xhat_.data() + r * d;
        T sum_g = 0, sum_gx = 0;
        for (std::size_t j = 0; j < d; ++j) {
            weight_grad(j) += dy[j] * xh[j];
            bias_grad(j) += dy[j];
            const T g = dy[j] * weight(j);
            sum_g += g;
            sum_gx += g * xh[j];
        }
        if (!need_input_grad) continue;
        T* dx = input_grad_.data() + r * d;
        const T scale = rstd_(r) / T(d);
        for (std::size_t j = 0; j < d; ++j) dx[j] = scale * (T(d) * dy[j] * weight(j) - sum_g - xh[j] * sum_gx);
    }
    if (!need_input_grad) input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T>
void LayerNorm<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {weight.size()}, weight.data(), weight_grad.data()});
    out.push_back({prefix + "bias", {bias.size()}, bias.data(), bias_grad.data()});
}

// ---------------------------------------------------------------------------
// RMSNorm: xhat = x / sqrt(mean(x^2) + eps), y = w xhat.
// Backward per row (g = dy * w): dx = rstd * (g - xhat * mean(g xhat)).

template <class T>
RMSNorm<T>::RMSNorm(std::size_t d, double eps_) : weight(xt::ones<T>({d})), weight_grad(xt::zeros<T>({d})), eps(eps_) {}

template <class T>
const Matrix<T>& RMSNorm<T>::forward(const Matrix<T>& X) {
    const std::size_t rows = X.shape()[0], d = X.shape()[1];
    ensure_shape(xhat_, rows, d);
    ensure_shape(out_, rows, d);
    if (rstd_.size() != rows) rstd_ = Vector<T>::from_shape({rows});
    for (std::size_t r = 0; r < rows; ++r) {
        const T* x = X.data() + r * d;
        T ms = 0;
        for (std::size_t j = 0; j < d; ++j) ms += x[j] * x[j];
        const T rstd = T(1) / std::sqrt(ms / T(d) + T(eps));
        rstd_(r) = rstd;
        T* xh = xhat_.data() + r * d;
        T* y = out_.data() + r * d;
        for (std::size_t j = 0; j < d; ++j) {
            xh[j] = x[j] * rstd;
            y[j] = weight(j) * xh[j];
        }
    }
    return out_;
}

template <class T>
const Matrix<T>& RMSNorm<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    const std::size_t rows = dY.shape()[0], d = dY.shape()[1];
    std::fill(weight_grad.begin(), weight_grad.end(), T(0));
    if (need_input_grad) ensure_shape(input_grad_, rows, d);
    for (std::size_t r = 0; r < rows; ++r) {
        const T* dy = dY.data() + r * d;
        const T* xh = xhat_.data() + r * d;
        T sum_gx = 0;
        for (std::size_t j = 0; j < d; ++j) {
            weight_grad(j) += dy[j] * xh[j];
            sum_gx += dy[j] * weight(j) * xh[j];
        }
        if (!need_input_grad) continue;
        T* dx = input_grad_.data() + r * d;
        const T mean_gx = sum_gx / T(d);
        for (std::size_t j = 0; j < d; ++j) dx[j] = rstd_(r) * (dy[j] * weight(j) - xh[j] * mean_gx);
    }
    if (!need_input_grad) input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T>
void RMSNorm<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {weight.size()}, weight.data(), weight_grad.data()});
}

template class LayerNorm<float>;
template class LayerNorm<double>;
template class RMSNorm<float>;
template class RMSNorm<double>;

}  // namespace ffn::nn
