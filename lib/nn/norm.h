#pragma once
// Normalisations over the feature dimension of each token, with a learned
// elementwise scale ("weight") and, for LayerNorm, shift ("bias"), as
// PyTorch's nn.LayerNorm and nn.RMSNorm (eps inside the square root).
#include "nn/module.h"

namespace ffn::nn {

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
