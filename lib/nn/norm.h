#pragma once
// Normalisations over the feature dimension of each token, with a learned
// elementwise scale ("weight") and, for LayerNorm, shift ("bias"), as
// PyTorch's nn.LayerNorm and nn.RMSNorm (eps inside the square root).
#include "nn/module.h"

namespace ffn::nn {

// The row loops of both norms, shared with their batched forms
// (nn/batched.h): `rows` rows of d features under one scale w (and shift b).
// Backward adds the parameters' gradients into wg (and bg) and writes dX
// when it is not null.
template <class T>
void layer_norm_rows(const T* X, std::size_t rows, std::size_t d, const T* w, const T* b, double eps, T* xhat, T* y,
                     T* rstd);
template <class T>
void layer_norm_backward_rows(const T* dY, const T* xhat, const T* rstd, std::size_t rows, std::size_t d, const T* w,
                              T* wg, T* bg, T* dX);
template <class T>
void rms_norm_rows(const T* X, std::size_t rows, std::size_t d, const T* w, double eps, T* xhat, T* y, T* rstd);
template <class T>
void rms_norm_backward_rows(const T* dY, const T* xhat, const T* rstd, std::size_t rows, std::size_t d, const T* w,
                            T* wg, T* dX);

template <class T>
class LayerNorm : public Module<T> {
public:
    explicit LayerNorm(std::size_t d, double eps = 1e-5);
    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    Vector<T> weight, bias, weight_grad, bias_grad;
    double eps;

private:
    Matrix<T> xhat_, out_, input_grad_;
    Vector<T> rstd_;
};

template <class T>
class RMSNorm : public Module<T> {
public:
    explicit RMSNorm(std::size_t d, double eps = 1e-6);
    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    Vector<T> weight, weight_grad;
    double eps;

private:
    Matrix<T> xhat_, out_, input_grad_;
    Vector<T> rstd_;
};

}  // namespace ffn::nn
