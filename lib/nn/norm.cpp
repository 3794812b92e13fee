#include "nn/norm.h"

#include <cmath>

#include "core/error.h"

namespace ffn::nn {

// ---------------------------------------------------------------------------
// LayerNorm: xhat = (x - mean) / sqrt(var + eps) (biased variance), y = w xhat + b.
// Backward per row (N features, g = dy * w):
//   dx = rstd / N * (N g - sum(g) - xhat * sum(g xhat))

template <class T>
void layer_norm_rows(const T* X, std::size_t rows, std::size_t d, const T* w, const T* b, double eps, T* xhat, T* y,
                     T* rstd) {
    for (std::size_t r = 0; r < rows; ++r) {
        const T* x = X + r * d;
        T mean = 0;
        for (std::size_t j = 0; j < d; ++j) mean += x[j];
        mean /= T(d);
        T var = 0;
        for (std::size_t j = 0; j < d; ++j) var += (x[j] - mean) * (x[j] - mean);
        var /= T(d);
        const T s = T(1) / std::sqrt(var + T(eps));
        rstd[r] = s;
        T* xh = xhat + r * d;
        T* yr = y + r * d;
        for (std::size_t j = 0; j < d; ++j) {
            xh[j] = (x[j] - mean) * s;
            yr[j] = w[j] * xh[j] + b[j];
        }
    }
}

template <class T>
void layer_norm_backward_rows(const T* dY, const T* xhat, const T* rstd, std::size_t rows, std::size_t d, const T* w,
                              T* wg, T* bg, T* dX) {
    for (std::size_t r = 0; r < rows; ++r) {
        const T* dy = dY + r * d;
        const T* xh = xhat + r * d;
        T sum_g = 0, sum_gx = 0;
        for (std::size_t j = 0; j < d; ++j) {
            wg[j] += dy[j] * xh[j];
            bg[j] += dy[j];
            const T g = dy[j] * w[j];
            sum_g += g;
            sum_gx += g * xh[j];
        }
        if (!dX) continue;
        T* dx = dX + r * d;
        const T scale = rstd[r] / T(d);
        for (std::size_t j = 0; j < d; ++j) dx[j] = scale * (T(d) * dy[j] * w[j] - sum_g - xh[j] * sum_gx);
    }
}

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
    layer_norm_rows(X.data(), rows, d, weight.data(), bias.data(), eps, xhat_.data(), out_.data(), rstd_.data());
    return out_;
}

template <class T>
const Matrix<T>& LayerNorm<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    if (dY.shape() != xhat_.shape()) throw Error("LayerNorm backward: dY is not of the last forward pass's shape");
    const std::size_t rows = dY.shape()[0], d = dY.shape()[1];
    std::fill(weight_grad.begin(), weight_grad.end(), T(0));
    std::fill(bias_grad.begin(), bias_grad.end(), T(0));
    if (need_input_grad) ensure_shape(input_grad_, rows, d);
    layer_norm_backward_rows(dY.data(), xhat_.data(), rstd_.data(), rows, d, weight.data(), weight_grad.data(),
                             bias_grad.data(), need_input_grad ? input_grad_.data() : nullptr);
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
void rms_norm_rows(const T* X, std::size_t rows, std::size_t d, const T* w, double eps, T* xhat, T* y, T* rstd) {
    for (std::size_t r = 0; r < rows; ++r) {
        const T* x = X + r * d;
        T ms = 0;
        for (std::size_t j = 0; j < d; ++j) ms += x[j] * x[j];
        const T s = T(1) / std::sqrt(ms / T(d) + T(eps));
        rstd[r] = s;
        T* xh = xhat + r * d;
        T* yr = y + r * d;
        for (std::size_t j = 0; j < d; ++j) {
            xh[j] = x[j] * s;
            yr[j] = w[j] * xh[j];
        }
    }
}

template <class T>
void rms_norm_backward_rows(const T* dY, const T* xhat, const T* rstd, std::size_t rows, std::size_t d, const T* w,
                            T* wg, T* dX) {
    for (std::size_t r = 0; r < rows; ++r) {
        const T* dy = dY + r * d;
        const T* xh = xhat + r * d;
        T sum_gx = 0;
        for (std::size_t j = 0; j < d; ++j) {
            wg[j] += dy[j] * xh[j];
            sum_gx += dy[j] * w[j] * xh[j];
        }
        if (!dX) continue;
        T* dx = dX + r * d;
        const T mean_gx = sum_gx / T(d);
        const T s = rstd[r];
        for (std::size_t j = 0; j < d; ++j) dx[j] = s * (dy[j] * w[j] - xh[j] * mean_gx);
    }
}

template <class T>
RMSNorm<T>::RMSNorm(std::size_t d, double eps_) : weight(xt::ones<T>({d})), weight_grad(xt::zeros<T>({d})), eps(eps_) {}

template <class T>
const Matrix<T>& RMSNorm<T>::forward(const Matrix<T>& X) {
    const std::size_t rows = X.shape()[0], d = X.shape()[1];
    ensure_shape(xhat_, rows, d);
    ensure_shape(out_, rows, d);
    if (rstd_.size() != rows) rstd_ = Vector<T>::from_shape({rows});
    rms_norm_rows(X.data(), rows, d, weight.data(), eps, xhat_.data(), out_.data(), rstd_.data());
    return out_;
}

template <class T>
const Matrix<T>& RMSNorm<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    if (dY.shape() != xhat_.shape()) throw Error("RMSNorm backward: dY is not of the last forward pass's shape");
    const std::size_t rows = dY.shape()[0], d = dY.shape()[1];
    std::fill(weight_grad.begin(), weight_grad.end(), T(0));
    if (need_input_grad) ensure_shape(input_grad_, rows, d);
    rms_norm_backward_rows(dY.data(), xhat_.data(), rstd_.data(), rows, d, weight.data(), weight_grad.data(),
                           need_input_grad ? input_grad_.data() : nullptr);
    if (!need_input_grad) input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T>
void RMSNorm<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {weight.size()}, weight.data(), weight_grad.data()});
}

#define FFNLAB_INSTANTIATE(T)                                                                                          \
    template class LayerNorm<T>;                                                                                       \
    template class RMSNorm<T>;                                                                                         \
    template void layer_norm_rows<T>(const T*, std::size_t, std::size_t, const T*, const T*, double, T*, T*, T*);     \
    template void layer_norm_backward_rows<T>(const T*, const T*, const T*, std::size_t, std::size_t, const T*, T*,   \
                                              T*, T*);                                                                 \
    template void rms_norm_rows<T>(const T*, std::size_t, std::size_t, const T*, double, T*, T*, T*);                 \
    template void rms_norm_backward_rows<T>(const T*, const T*, const T*, std::size_t, std::size_t, const T*, T*, T*);
FFNLAB_INSTANTIATE(float)
FFNLAB_INSTANTIATE(double)
#undef FFNLAB_INSTANTIATE

}  // namespace ffn::nn
