#pragma once
// Linear layer y = x W^T + b, PyTorch's nn.Linear layout: weight is
// (out_features, in_features), bias is (out_features).
#include <cstddef>
#include <string>
#include <vector>

#include "nn/tensor.h"

namespace ffn::nn {

// A named view of one parameter tensor, for counting, analysis and weight files.
template <class T>
struct ParamRef {
    std::string name;
    xt::xtensor<T, 2>* matrix = nullptr;  // exactly one of matrix / vector is set
    xt::xtensor<T, 1>* vector = nullptr;
    std::size_t size() const { return matrix ? matrix->size() : vector->size(); }
};

template <class T>
class Linear {
public:
    Linear() = default;
    // Parameters start at zero; an initialiser or explicit values fill them.
    Linear(std::size_t in_features, std::size_t out_features, bool bias = true);

    std::size_t in_features() const { return weight.shape()[1]; }
    std::size_t out_features() const { return weight.shape()[0]; }
    bool has_bias() const { return bias.size() != 0; }

    // X: (tokens, in) -> (tokens, out)
    Matrix<T> forward(const Matrix<T>& X) const;

    // Appends this layer's parameters as prefix + "weight" / prefix + "bias".
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out);

    Matrix<T> weight;
    Vector<T> bias;
};

template <class T>
std::size_t parameter_count(const std::vector<ParamRef<T>>& params) {
    std::size_t n = 0;
    for (const auto& p : params) n += p.size();
    return n;
}

}  // namespace ffn::nn
