#include "analysis/collapse.h"

namespace ffn::analysis {

// The d_in basis rows, fed through the layers without their biases, come out
// as the rows of W^T; a zero row fed through the full layers comes out as
// the folded bias. Every product is the layers' own (nn::apply).
template <class T>
nn::Linear<T> collapse_to_linear(const nn::MLP<T>& mlp) {
    const std::size_t d_in = mlp.layers.front().in_features(), d_out = mlp.layers.back().out_features();
    nn::Matrix<T> basis = xt::zeros<T>({d_in, d_in});
    for (std::size_t i = 0; i < d_in; ++i) basis(i, i) = T(1);
    nn::Matrix<T> bias_row = xt::zeros<T>({std::size_t{1}, d_in});
    for (const auto& layer : mlp.layers) {
        nn::Linear<T> linear_part = layer;
        linear_part.bias = nn::Vector<T>();
        basis = nn::apply(linear_part, basis);
        bias_row = nn::apply(layer, bias_row);
    }
    nn::Linear<T> single(d_in, d_out, true);
    single.weight = xt::transpose(basis);
    for (std::size_t j = 0; j < d_out; ++j) single.bias(j) = bias_row(0, j);
    return single;
}

template nn::Linear<float> collapse_to_linear<float>(const nn::MLP<float>&);
template nn::Linear<double> collapse_to_linear<double>(const nn::MLP<double>&);

}  // namespace ffn::analysis
