#include "nn/linear.h"

#include "core/error.h"
#include "gemm/gemm.h"

namespace ffn::nn {

template <class T>
Linear<T>::Linear(std::size_t in_features, std::size_t out_features, bool with_bias)
    : weight(xt::zeros<T>({out_features, in_features})),
      bias(xt::zeros<T>({with_bias ? out_features : std::size_t{0}})) {}

template <class T>
Matrix<T> Linear<T>::forward(const Matrix<T>& X) const {
    const auto tokens = static_cast<std::int64_t>(X.shape()[0]);
    const auto in = static_cast<std::int64_t>(in_features());
    const auto out = static_cast<std::int64_t>(out_features());
    if (X.shape()[1] != in_features())
        throw Error("Linear: input has " + std::to_string(X.shape()[1]) + " features, layer expects " +
                    std::to_string(in));
    Matrix<T> Y = Matrix<T>::from_shape({X.shape()[0], out_features()});
    gemm::Epilogue<T> bias_add;
    bias_add.bias = has_bias() ? bias.data() : nullptr;
    gemm::gemm<T>(gemm::Trans::no, gemm::Trans::yes, tokens, out, in, T(1), X.data(), in, weight.data(), in, T(0),
                  Y.data(), out, bias_add);
    return Y;
}

template <class T>
void Linear<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", &weight, nullptr});
    if (has_bias()) out.push_back({prefix + "bias", nullptr, &bias});
}

template class Linear<float>;
template class Linear<double>;

}  // namespace ffn::nn
