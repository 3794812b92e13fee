#include "nn/batched.h"

#include <algorithm>

#include "core/error.h"
#include "nn/norm.h"

namespace ffn::nn {

namespace {

// The stacked input's rows per instance; a stack that does not split
// evenly is a caller's error.
template <class T>
std::size_t tokens_of(const Matrix<T>& X, std::size_t instances, std::size_t features, const char* what) {
    if (X.shape()[1] != features || X.shape()[0] % instances != 0)
        throw Error(std::string(what) + ": expected a stack of " + std::to_string(instances) + " [tokens, " +
                    std::to_string(features) + "] matrices, got " + std::to_string(X.shape()[0]) + " x " +
                    std::to_string(X.shape()[1]));
    return X.shape()[0] / instances;
}

// Each stacked parameter's shape is the alone one's with the instances in
// front, the same count for all of them.
template <class T>
void copy_instance(Module<T>& batched, std::size_t i, Module<T>& alone, bool into_batched) {
    const char* what = into_batched ? "set_instance" : "get_instance";
    const auto stacked = batched.parameters(), single = alone.parameters();
    if (stacked.size() != single.size() || stacked.empty())
        throw Error(std::string(what) + ": the modules have different parameters");
    for (std::size_t p = 0; p < stacked.size(); ++p) {
        std::vector<std::size_t> want = {stacked.front().shape.front()};
        want.insert(want.end(), single[p].shape.begin(), single[p].shape.end());
        if (stacked[p].name != single[p].name || stacked[p].shape != want)
            throw Error(std::string(what) + ": parameter '" + stacked[p].name + "' does not stack '" + single[p].name + "'");
        if (i >= want.front()) throw Error(std::string(what) + ": no instance " + std::to_string(i) + " of " + std::to_string(want.front()));
        const std::size_t n = single[p].size();
        T* slice = stacked[p].value + i * n;
        if (into_batched)
            std::copy(single[p].value, single[p].value + n, slice);
        else
            std::copy(slice, slice + n, single[p].value);
    }
}

}  // namespace

template <class T>
void set_instance(Module<T>& batched, std::size_t i, Module<T>& alone) {
    copy_instance(batched, i, alone, true);
}

template <class T>
void get_instance(Module<T>& batched, std::size_t i, Module<T>& alone) {
    copy_instance(batched, i, alone, false);
}

template <class T>
BatchedMLP<T>::BatchedMLP(std::size_t instances, const std::vector<std::size_t>& widths, Activation act, bool bias)
    : MLPOf<T, BatchedLinear<T>>(chain_of<BatchedLinear<T>>("BatchedMLP", widths, bias, instances), act) {}

template <class T>
BatchedGatedMLP<T>::BatchedGatedMLP(std::size_t instances, std::size_t d, std::size_t hidden, Activation act, bool bias)
    : GatedMLPOf<T, BatchedLinear<T>>(BatchedLinear<T>(instances, d, hidden, bias), BatchedLinear<T>(instances, d, hidden, bias),
                                      BatchedLinear<T>(instances, hidden, d, bias), act) {}

template <class T>
BatchedBilinearMLP<T>::BatchedBilinearMLP(std::size_t instances, std::size_t d, std::size_t hidden, std::size_t rank,
                                          Activation act, bool bias)
    : BilinearMLPOf<T, BatchedLinear<T>>(rank_of<BatchedLinear<T>>("BatchedBilinearMLP", rank, d, hidden, bias, instances),
                                         rank_of<BatchedLinear<T>>("BatchedBilinearMLP", rank, d, hidden, bias, instances),
                                         BatchedLinear<T>(instances, hidden, d, bias), act) {}

// ---------------------------------------------------------------------------
// The batched norms: the norms' row loops, instance by instance, each with
// its own slice of the scale and shift.

template <class T>
BatchedLayerNorm<T>::BatchedLayerNorm(std::size_t instances, std::size_t d, double eps_)
    : weight(xt::ones<T>({instances, d})),
      bias(xt::zeros<T>({instances, d})),
      weight_grad(xt::zeros<T>({instances, d})),
      bias_grad(xt::zeros<T>({instances, d})),
      eps(eps_) {
    if (instances < 1) throw Error("BatchedLayerNorm: at least one instance");
}

template <class T>
const Matrix<T>& BatchedLayerNorm<T>::forward(const Matrix<T>& X) {
    const std::size_t I = weight.shape()[0], d = weight.shape()[1];
    const std::size_t tokens = tokens_of(X, I, d, "BatchedLayerNorm");
    ensure_shape(xhat_, I * tokens, d);
    ensure_shape(out_, I * tokens, d);
    if (rstd_.size() != I * tokens) rstd_ = Vector<T>::from_shape({I * tokens});
    for (std::size_t i = 0; i < I; ++i) {
        const std::size_t rows = i * tokens * d;
        layer_norm_rows(X.data() + rows, tokens, d, weight.data() + i * d, bias.data() + i * d, eps, xhat_.data() + rows,
                        out_.data() + rows, rstd_.data() + i * tokens);
    }
    return out_;
}

template <class T>
const Matrix<T>& BatchedLayerNorm<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    if (dY.shape() != xhat_.shape()) throw Error("BatchedLayerNorm backward: dY is not of the last forward pass's shape");
    const std::size_t I = weight.shape()[0], d = weight.shape()[1];
    const std::size_t tokens = tokens_of(dY, I, d, "BatchedLayerNorm backward");
    std::fill(weight_grad.begin(), weight_grad.end(), T(0));
    std::fill(bias_grad.begin(), bias_grad.end(), T(0));
    if (need_input_grad) ensure_shape(input_grad_, I * tokens, d);
    for (std::size_t i = 0; i < I; ++i) {
        const std::size_t rows = i * tokens * d;
        layer_norm_backward_rows(dY.data() + rows, xhat_.data() + rows, rstd_.data() + i * tokens, tokens, d,
                                 weight.data() + i * d, weight_grad.data() + i * d, bias_grad.data() + i * d,
                                 need_input_grad ? input_grad_.data() + rows : nullptr);
    }
    if (!need_input_grad) input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T>
void BatchedLayerNorm<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {weight.shape()[0], weight.shape()[1]}, weight.data(), weight_grad.data()});
    out.push_back({prefix + "bias", {bias.shape()[0], bias.shape()[1]}, bias.data(), bias_grad.data()});
}

template <class T>
BatchedRMSNorm<T>::BatchedRMSNorm(std::size_t instances, std::size_t d, double eps_)
    : weight(xt::ones<T>({instances, d})), weight_grad(xt::zeros<T>({instances, d})), eps(eps_) {
    if (instances < 1) throw Error("BatchedRMSNorm: at least one instance");
}

template <class T>
const Matrix<T>& BatchedRMSNorm<T>::forward(const Matrix<T>& X) {
    const std::size_t I = weight.shape()[0], d = weight.shape()[1];
    const std::size_t tokens = tokens_of(X, I, d, "BatchedRMSNorm");
    ensure_shape(xhat_, I * tokens, d);
    ensure_shape(out_, I * tokens, d);
    if (rstd_.size() != I * tokens) rstd_ = Vector<T>::from_shape({I * tokens});
    for (std::size_t i = 0; i < I; ++i) {
        const std::size_t rows = i * tokens * d;
        rms_norm_rows(X.data() + rows, tokens, d, weight.data() + i * d, eps, xhat_.data() + rows, out_.data() + rows,
                      rstd_.data() + i * tokens);
    }
    return out_;
}

template <class T>
const Matrix<T>& BatchedRMSNorm<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    if (dY.shape() != xhat_.shape()) throw Error("BatchedRMSNorm backward: dY is not of the last forward pass's shape");
    const std::size_t I = weight.shape()[0], d = weight.shape()[1];
    const std::size_t tokens = tokens_of(dY, I, d, "BatchedRMSNorm backward");
    std::fill(weight_grad.begin(), weight_grad.end(), T(0));
    if (need_input_grad) ensure_shape(input_grad_, I * tokens, d);
    for (std::size_t i = 0; i < I; ++i) {
        const std::size_t rows = i * tokens * d;
        rms_norm_backward_rows(dY.data() + rows, xhat_.data() + rows, rstd_.data() + i * tokens, tokens, d,
                               weight.data() + i * d, weight_grad.data() + i * d,
                               need_input_grad ? input_grad_.data() + rows : nullptr);
    }
    if (!need_input_grad) input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T>
void BatchedRMSNorm<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {weight.shape()[0], weight.shape()[1]}, weight.data(), weight_grad.data()});
}

#define FFNLAB_INSTANTIATE(T)                                               \
    template class BatchedMLP<T>;                                           \
    template class BatchedGatedMLP<T>;                                      \
    template class BatchedBilinearMLP<T>;                                   \
    template class BatchedLayerNorm<T>;                                     \
    template class BatchedRMSNorm<T>;                                       \
    template void set_instance<T>(Module<T>&, std::size_t, Module<T>&);     \
    template void get_instance<T>(Module<T>&, std::size_t, Module<T>&);
FFNLAB_INSTANTIATE(float)
FFNLAB_INSTANTIATE(double)
#undef FFNLAB_INSTANTIATE

}  // namespace ffn::nn
