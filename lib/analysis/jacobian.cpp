#include "analysis/jacobian.h"

#include "gemm/gemm.h"

namespace ffn::analysis {

// Chain rule layer by layer: J <- W_i diag(act'(z_{i-1})) J, starting from
// J = W_0; the forward pass supplies each pre-activation z.
template <class T>
nn::Matrix<T> mlp_jacobian(const nn::MLP<T>& mlp, const nn::Vector<T>& x) {
    nn::Matrix<T> J = mlp.layers.front().weight;
    nn::Matrix<T> z = nn::apply(mlp.layers.front(), xt::eval(xt::reshape_view(x, {std::size_t{1}, x.size()})));
    for (std::size_t i = 1; i < mlp.layers.size(); ++i) {
        for (std::size_t r = 0; r < J.shape()[0]; ++r)
            for (std::size_t c = 0; c < J.shape()[1]; ++c) J(r, c) *= nn::activate_derivative(mlp.activation, z(0, r));
        const auto& W = mlp.layers[i].weight;
        nn::Matrix<T> next = nn::Matrix<T>::from_shape({W.shape()[0], J.shape()[1]});
        gemm::gemm<T>(gemm::Trans::no, gemm::Trans::no, static_cast<std::int64_t>(W.shape()[0]),
                      static_cast<std::int64_t>(J.shape()[1]), static_cast<std::int64_t>(W.shape()[1]), T(1),
                      W.data(), static_cast<std::int64_t>(W.shape()[1]), J.data(),
                      static_cast<std::int64_t>(J.shape()[1]), T(0), next.data(),
                      static_cast<std::int64_t>(J.shape()[1]));
        if (i + 1 < mlp.layers.size()) {
            nn::Matrix<T> h = z;
            nn::activate_inplace<T>(mlp.activation, std::span<T>(h.data(), h.size()));
            z = nn::apply(mlp.layers[i], h);
        }
        J = std::move(next);
    }
    return J;
}

template nn::Matrix<float> mlp_jacobian<float>(const nn::MLP<float>&, const nn::Vector<float>&);
template nn::Matrix<double> mlp_jacobian<double>(const nn::MLP<double>&, const nn::Vector<double>&);

}  // namespace ffn::analysis
