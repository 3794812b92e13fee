#include "nn/batched.h"

#include <algorithm>

#include "core/error.h"
#include "gemm/gemm.h"
#include "nn/row_hooks.h"

namespace ffn::nn {

namespace {

using gemm::Trans;

std::int64_t as_i64(std::size_t v) { return static_cast<std::int64_t>(v); }

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

}  // namespace

template <class T>
BatchedLinear<T>::BatchedLinear(std::size_t instances, std::size_t in, std::size_t out, bool with_bias)
    : weight(xt::zeros<T>({instances * out, in})),
      weight_grad(Matrix<T>::from_shape({instances * out, in})),
      bias(xt::zeros<T>({instances, with_bias ? out : std::size_t{0}})),
      bias_grad(Matrix<T>::from_shape({instances, with_bias ? out : std::size_t{0}})),
      instances_(instances) {
    if (instances < 1) throw Error("BatchedLinear: at least one instance");
}

template <class T>
void BatchedLinear<T>::set_instance(std::size_t i, const Linear<T>& layer) {
    const std::size_t out = out_features(), in = in_features();
    if (i >= instances_) throw Error("BatchedLinear::set_instance: no instance " + std::to_string(i));
    if (layer.out_features() != out || layer.in_features() != in || layer.has_bias() != has_bias())
        throw Error("BatchedLinear::set_instance: another shape");
    std::copy(layer.weight.data(), layer.weight.data() + out * in, weight.data() + i * out * in);
    if (has_bias()) std::copy(layer.bias.data(), layer.bias.data() + out, bias.data() + i * out);
}

template <class T>
void BatchedLinear<T>::get_instance(std::size_t i, Linear<T>& layer) const {
    const std::size_t out = out_features(), in = in_features();
    if (i >= instances_) throw Error("BatchedLinear::get_instance: no instance " + std::to_string(i));
    if (layer.out_features() != out || layer.in_features() != in || layer.has_bias() != has_bias())
        throw Error("BatchedLinear::get_instance: another shape");
    std::copy(weight.data() + i * out * in, weight.data() + (i + 1) * out * in, layer.weight.data());
    if (has_bias()) std::copy(bias.data() + i * out, bias.data() + (i + 1) * out, layer.bias.data());
}

// Each call is linear_forward's (or linear_backward_*'s) product with the
// instance's slices: the same gemm, so the same bits.
template <class T>
void batched_forward(const BatchedLinear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, bool relu, RowHook<T> then) {
    const std::size_t I = layer.instances(), in = layer.in_features(), out = layer.out_features();
    const std::size_t tokens = tokens_of(X, I, in, "BatchedLinear");
    ensure_shape(Y, I * tokens, out);
    gemm::Epilogue<T> ep;
    ep.bias = layer.has_bias() ? layer.bias.data() : nullptr;
    if (relu) ep.pointwise = gemm::Pointwise::relu;
    ep.rowwise = then.fn;
    ep.context = then.context;
    gemm::gemm_batched<T>(as_i64(I), Trans::no, Trans::yes, as_i64(tokens), as_i64(out), as_i64(in), T(1), X.data(), as_i64(in),
                          layer.weight.data(), as_i64(in), T(0), Y.data(), as_i64(out),
                          {.a = as_i64(tokens * in), .b = as_i64(out * in), .c = as_i64(tokens * out), .bias = as_i64(out)}, ep);
}

template <class T>
void batched_backward_params(BatchedLinear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY) {
    const std::size_t I = layer.instances(), in = layer.in_features(), out = layer.out_features();
    const std::size_t tokens = tokens_of(X, I, in, "BatchedLinear");
    if (tokens_of(dY, I, out, "BatchedLinear backward") != tokens) throw Error("BatchedLinear backward: dY and X differ in tokens");
    gemm::gemm_batched<T>(as_i64(I), Trans::yes, Trans::no, as_i64(out), as_i64(in), as_i64(tokens), T(1), dY.data(), as_i64(out),
                          X.data(), as_i64(in), T(0), layer.weight_grad.data(), as_i64(in),
                          {.a = as_i64(tokens * out), .b = as_i64(tokens * in), .c = as_i64(out * in)});
    if (layer.has_bias()) {
        thread_local std::vector<T> ones;
        if (ones.size() < tokens) ones.assign(tokens, T(1));
        gemm::gemm_batched<T>(as_i64(I), Trans::no, Trans::no, 1, as_i64(out), as_i64(tokens), T(1), ones.data(), as_i64(tokens),
                              dY.data(), as_i64(out), T(0), layer.bias_grad.data(), as_i64(out),
                              {.a = 0, .b = as_i64(tokens * out), .c = as_i64(out)});
    }
}

template <class T>
void batched_backward_input(const BatchedLinear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, const Matrix<T>* relu_out,
                            RowHook<T> then) {
    const std::size_t I = layer.instances(), in = layer.in_features(), out = layer.out_features();
    const std::size_t tokens = tokens_of(dY, I, out, "BatchedLinear backward");
    ensure_shape(dX, I * tokens, in);
    gemm::Epilogue<T> ep;
    if (relu_out) {
        ep.pointwise = gemm::Pointwise::relu_grad;
        ep.aux = relu_out->data();
        ep.ld_aux = as_i64(in);
    }
    ep.rowwise = then.fn;
    ep.context = then.context;
    gemm::gemm_batched<T>(as_i64(I), Trans::no, Trans::no, as_i64(tokens), as_i64(in), as_i64(out), T(1), dY.data(), as_i64(out),
                          layer.weight.data(), as_i64(in), T(0), dX.data(), as_i64(in),
                          {.a = as_i64(tokens * out), .b = as_i64(out * in), .c = as_i64(tokens * in), .aux = as_i64(tokens * in)}, ep);
}

template <class T>
BatchedMLP<T>::BatchedMLP(std::size_t instances, const std::vector<std::size_t>& widths, Activation act, bool bias)
    : activation(act), instances_(instances) {
    if (widths.size() < 2) throw Error("BatchedMLP needs at least an input and an output width");
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) layers.emplace_back(instances, widths[i], widths[i + 1], bias);
    derivative_.resize(layers.size());
    out_.resize(layers.size());
    grad_.resize(layers.size());
}

template <class T>
void BatchedMLP<T>::set_instance(std::size_t i, const MLP<T>& net) {
    if (net.layers.size() != layers.size()) throw Error("BatchedMLP::set_instance: another depth");
    for (std::size_t l = 0; l < layers.size(); ++l) layers[l].set_instance(i, net.layers[l]);
}

template <class T>
void BatchedMLP<T>::get_instance(std::size_t i, MLP<T>& net) const {
    if (net.layers.size() != layers.size()) throw Error("BatchedMLP::get_instance: another depth");
    for (std::size_t l = 0; l < layers.size(); ++l) layers[l].get_instance(i, net.layers[l]);
}

// MLP::forward and backward, layer for layer, on the stack.
template <class T>
const Matrix<T>& BatchedMLP<T>::forward(const Matrix<T>& X) {
    input_ = &X;
    const bool smooth = !derivative_from_output(activation), relu = activation == Activation::relu;
    const Matrix<T>* in = &X;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        if (l + 1 == layers.size()) {
            batched_forward(layers[l], *in, out_[l]);
        } else if (smooth) {
            ensure_shape(derivative_[l], in->shape()[0], layers[l].out_features());
            hooks::KeptRows<T> keep{activation, derivative_[l].data(), as_i64(layers[l].out_features())};
            batched_forward<T>(layers[l], *in, out_[l], false, {hooks::activate_rows<T>, &keep});
        } else {
            batched_forward(layers[l], *in, out_[l], relu);
        }
        in = &out_[l];
    }
    return out_.back();
}

template <class T>
void BatchedMLP<T>::backward(const Matrix<T>& dY) {
    const bool smooth = !derivative_from_output(activation), relu = activation == Activation::relu;
    const Matrix<T>* g = &dY;
    for (std::size_t l = layers.size(); l-- > 0;) {
        batched_backward_params(layers[l], l == 0 ? *input_ : out_[l - 1], *g);
        if (l == 0) break;
        if (smooth) {
            hooks::KeptRows<T> kept{activation, derivative_[l - 1].data(), as_i64(layers[l - 1].out_features())};
            batched_backward_input<T>(layers[l], *g, grad_[l - 1], nullptr, {hooks::times_derivative_rows<T>, &kept});
        } else {
            batched_backward_input(layers[l], *g, grad_[l - 1], relu ? &out_[l - 1] : nullptr);
        }
        g = &grad_[l - 1];
    }
}

namespace {
template <class T>
void add_parameters(BatchedLinear<T>& layer, const std::string& name, std::vector<ParamRef<T>>& out) {
    out.push_back({name + "weight", {layer.weight.shape()[0], layer.weight.shape()[1]}, layer.weight.data(),
                   layer.weight_grad.data()});
    if (layer.has_bias())
        out.push_back({name + "bias", {layer.bias.shape()[0], layer.bias.shape()[1]}, layer.bias.data(), layer.bias_grad.data()});
}
}  // namespace

template <class T>
std::vector<ParamRef<T>> BatchedMLP<T>::parameters() {
    std::vector<ParamRef<T>> out;
    for (std::size_t l = 0; l < layers.size(); ++l) add_parameters(layers[l], "layer" + std::to_string(l) + ".", out);
    return out;
}

template <class T>
BatchedGatedMLP<T>::BatchedGatedMLP(std::size_t instances, std::size_t d, std::size_t hidden, Activation act, bool bias)
    : gate(instances, d, hidden, bias), up(instances, d, hidden, bias), down(instances, hidden, d, bias), activation(act) {}

template <class T>
void BatchedGatedMLP<T>::set_instance(std::size_t i, const GatedMLP<T>& block) {
    gate.set_instance(i, block.gate);
    up.set_instance(i, block.up);
    down.set_instance(i, block.down);
}

template <class T>
void BatchedGatedMLP<T>::get_instance(std::size_t i, GatedMLP<T>& block) const {
    gate.get_instance(i, block.gate);
    up.get_instance(i, block.up);
    down.get_instance(i, block.down);
}

// GatedMLP::forward and backward on the stack, with the same hooks.
template <class T>
const Matrix<T>& BatchedGatedMLP<T>::forward(const Matrix<T>& X) {
    input_ = &X;
    const auto columns = as_i64(gate.out_features());
    ensure_shape(pre_gate_, X.shape()[0], gate.out_features());
    hooks::KeptRows<T> keep{activation, pre_gate_.data(), columns};
    batched_forward<T>(gate, X, act_gate_, false, {hooks::keep_input_and_activate_rows<T>, &keep});
    ensure_shape(hidden_, X.shape()[0], gate.out_features());
    hooks::GateProduct<T> product{act_gate_.data(), hidden_.data(), columns};
    batched_forward<T>(up, X, up_out_, false, {hooks::gate_product_rows<T>, &product});
    batched_forward(down, hidden_, out_);
    return out_;
}

template <class T>
void BatchedGatedMLP<T>::backward(const Matrix<T>& dY) {
    batched_backward_params(down, hidden_, dY);
    ensure_shape(d_gate_, dY.shape()[0], gate.out_features());
    hooks::GateBackward<T> chain{activation,     act_gate_.data(), up_out_.data(), pre_gate_.data(),
                                 d_gate_.data(), as_i64(gate.out_features())};
    batched_backward_input<T>(down, dY, d_up_, nullptr, {hooks::gate_backward_rows<T>, &chain});
    batched_backward_params(gate, *input_, d_gate_);
    batched_backward_params(up, *input_, d_up_);
}

template <class T>
std::vector<ParamRef<T>> BatchedGatedMLP<T>::parameters() {
    std::vector<ParamRef<T>> out;
    add_parameters(gate, "gate.", out);
    add_parameters(up, "up.", out);
    add_parameters(down, "down.", out);
    return out;
}

#define FFNLAB_INSTANTIATE(T)                                                                                   \
    template class BatchedLinear<T>;                                                                            \
    template class BatchedMLP<T>;                                                                               \
    template class BatchedGatedMLP<T>;                                                                          \
    template void batched_forward<T>(const BatchedLinear<T>&, const Matrix<T>&, Matrix<T>&, bool, RowHook<T>);  \
    template void batched_backward_params<T>(BatchedLinear<T>&, const Matrix<T>&, const Matrix<T>&);            \
    template void batched_backward_input<T>(const BatchedLinear<T>&, const Matrix<T>&, Matrix<T>&, const Matrix<T>*, \
                                            RowHook<T>);
FFNLAB_INSTANTIATE(float)
FFNLAB_INSTANTIATE(double)
#undef FFNLAB_INSTANTIATE

}  // namespace ffn::nn
