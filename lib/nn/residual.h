#pragma once
// The pre-norm residual branch of a transformer block around a feed-forward
// module: y = x + F(N(x)), N a LayerNorm, an RMSNorm or nothing.
#include <memory>

#include "nn/module.h"

namespace ffn::nn {

template <class T>
class PreNormResidual : public Module<T> {
public:
    // norm may be null (no normalisation, as in doc 003's arithmetic).
    PreNormResidual(std::unique_ptr<Module<T>> norm, std::unique_ptr<Module<T>> ffn);

    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    // Names: "norm." + the norm's, "ffn." + the feed-forward module's.
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    std::unique_ptr<Module<T>> norm, ffn;

private:
    Matrix<T> out_, input_grad_;
};

}  // namespace ffn::nn
