#include "nn/batched.h"

#include <algorithm>

#include "core/error.h"
#include "gemm/gemm.h"
#include "nn/norm.h"
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
BatchedLinear<T>::BatchedLinear(std::size_t instances, std::size_t in, std::size_t out, bool with_bias)
    : weight(xt::zeros<T>({instances * out, in})),
      weight_grad(Matrix<T>::from_shape({instances * out, in})),
      bias(xt::zeros<T>({instances, with_bias ? out : std::size_t{0}})),
      bias_grad(Matrix<T>::from_shape({instances, with_bias ? out : std::size_t{0}})),
      instances_(instances) {
    if (instances < 1) throw Error("BatchedLinear: at least one instance");
}

template <class T>
void BatchedLinear<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {instances_, out_features(), in_features()}, weight.data(), weight_grad.data()});
    if (has_bias()) out.push_back({prefix + "bias", {instances_, out_features()}, bias.data(), bias_grad.data()});
}

// Each call is linear_forward's (or linear_backward_*'s) product with the
// instance's slices: the same gemm, so the same bits.
template <class T>
void batched_forward(const BatchedLinear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, bool relu, RowHook<T> then) {
    const std::size_t I = layer.instances(), in = layer.in_features(), out = layer.out_features();
    const std::size_t tokens = tokens_of(X, I, in, "BatchedLinear");
    if (relu && then.fn) throw Error("BatchedLinear: a ReLU or a row hook, not both");
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
void batched_backward_input(const BatchedLinear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, T beta,
                            const Matrix<T>* relu_out, RowHook<T> then) {
    const std::size_t I = layer.instances(), in = layer.in_features(), out = layer.out_features();
    const std::size_t tokens = tokens_of(dY, I, out, "BatchedLinear backward");
    if (beta == T(0))
        ensure_shape(dX, I * tokens, in);
    else if (dX.shape()[0] != I * tokens || dX.shape()[1] != in)
        throw Error("BatchedLinear backward: accumulating into a dX of another shape");
    if (relu_out && then.fn) throw Error("BatchedLinear backward: a ReLU mask or a row hook, not both");
    gemm::Epilogue<T> ep;
    if (relu_out) {
        ep.pointwise = gemm::Pointwise::relu_grad;
        ep.aux = relu_out->data();
        ep.ld_aux = as_i64(in);
    }
    ep.rowwise = then.fn;
    ep.context = then.context;
    gemm::gemm_batched<T>(as_i64(I), Trans::no, Trans::no, as_i64(tokens), as_i64(in), as_i64(out), T(1), dY.data(), as_i64(out),
                          layer.weight.data(), as_i64(in), beta, dX.data(), as_i64(in),
                          {.a = as_i64(tokens * out), .b = as_i64(out * in), .c = as_i64(tokens * in), .aux = as_i64(tokens * in)}, ep);
}

// ---------------------------------------------------------------------------
// BatchedMLP: MLP::forward and backward, layer for layer, on the stack.

template <class T>
BatchedMLP<T>::BatchedMLP(std::size_t instances, const std::vector<std::size_t>& widths, Activation act, bool bias)
    : activation(act) {
    if (widths.size() < 2) throw Error("BatchedMLP needs at least an input and an output width");
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) layers.emplace_back(instances, widths[i], widths[i + 1], bias);
    derivative_.resize(layers.size());
    out_.resize(layers.size());
    grad_.resize(layers.size());
}

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
        if (l + 1 < layers.size() && this->hook) this->hook(l, out_[l]);
        in = &out_[l];
    }
    return out_.back();
}

template <class T>
const Matrix<T>& BatchedMLP<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    const bool smooth = !derivative_from_output(activation), relu = activation == Activation::relu;
    const Matrix<T>* g = &dY;
    for (std::size_t l = layers.size(); l-- > 0;) {
        batched_backward_params(layers[l], l == 0 ? *input_ : out_[l - 1], *g);
        if (l > 0) {
            if (smooth) {
                hooks::KeptRows<T> kept{activation, derivative_[l - 1].data(), as_i64(layers[l - 1].out_features())};
                batched_backward_input<T>(layers[l], *g, grad_[l - 1], T(0), nullptr, {hooks::times_derivative_rows<T>, &kept});
            } else {
                batched_backward_input(layers[l], *g, grad_[l - 1], T(0), relu ? &out_[l - 1] : nullptr);
            }
            g = &grad_[l - 1];
        } else if (need_input_grad) {
            batched_backward_input(layers[0], *g, input_grad_);
            return input_grad_;
        }
    }
    input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T>
void BatchedMLP<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    for (std::size_t l = 0; l < layers.size(); ++l)
        layers[l].collect_parameters(prefix + mlp_layer_name(l, layers.size()) + ".", out);
}

// ---------------------------------------------------------------------------
// BatchedGatedMLP: GatedMLP::forward and backward on the stack, with the
// same hooks.

template <class T>
BatchedGatedMLP<T>::BatchedGatedMLP(std::size_t instances, std::size_t d, std::size_t hidden, Activation act, bool bias)
    : gate(instances, d, hidden, bias), up(instances, d, hidden, bias), down(instances, hidden, d, bias), activation(act) {}

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
    if (this->hook) this->hook(0, hidden_);
    batched_forward(down, hidden_, out_);
    return out_;
}

template <class T>
const Matrix<T>& BatchedGatedMLP<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    batched_backward_params(down, hidden_, dY);
    ensure_shape(d_gate_, dY.shape()[0], gate.out_features());
    hooks::GateBackward<T> chain{activation,     act_gate_.data(), up_out_.data(), pre_gate_.data(),
                                 d_gate_.data(), as_i64(gate.out_features())};
    batched_backward_input<T>(down, dY, d_up_, T(0), nullptr, {hooks::gate_backward_rows<T>, &chain});
    batched_backward_params(gate, *input_, d_gate_);
    batched_backward_params(up, *input_, d_up_);
    if (!need_input_grad) {
        input_grad_ = Matrix<T>();
        return input_grad_;
    }
    batched_backward_input(gate, d_gate_, input_grad_);
    batched_backward_input(up, d_up_, input_grad_, T(1));
    return input_grad_;
}

template <class T>
void BatchedGatedMLP<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    gate.collect_parameters(prefix + "gate.", out);
    up.collect_parameters(prefix + "up.", out);
    down.collect_parameters(prefix + "down.", out);
}

// ---------------------------------------------------------------------------
// BatchedBilinearMLP: BilinearMLP's passes on the stack. Its elementwise
// loops run over the whole stack, each value getting the operations it gets
// alone.

template <class T>
BatchedBilinearMLP<T>::BatchedBilinearMLP(std::size_t instances, std::size_t d, std::size_t hidden, std::size_t rank,
                                          Activation act, bool bias)
    : down(instances, hidden, d, bias), activation(act) {
    if (rank < 1) throw Error("BatchedBilinearMLP: rank must be at least 1");
    for (std::size_t r = 0; r < rank; ++r) {
        q.emplace_back(instances, d, hidden, bias);
        k.emplace_back(instances, d, hidden, bias);
    }
    qx_.resize(rank);
    kx_.resize(rank);
}

template <class T>
const Matrix<T>& BatchedBilinearMLP<T>::forward(const Matrix<T>& X) {
    input_ = &X;
    ensure_shape(pre_, X.shape()[0], down.in_features());
    std::fill(pre_.begin(), pre_.end(), T(0));
    for (std::size_t r = 0; r < q.size(); ++r) {
        batched_forward(q[r], X, qx_[r]);
        batched_forward(k[r], X, kx_[r]);
        T* s = pre_.data();
        const T *a = qx_[r].data(), *b = kx_[r].data();
        for (std::size_t i = 0; i < pre_.size(); ++i) s[i] += a[i] * b[i];
    }
    hidden_ = pre_;
    activate_inplace<T>(activation, {hidden_.data(), hidden_.size()});
    if (this->hook) this->hook(0, hidden_);
    batched_forward(down, hidden_, out_);
    return out_;
}

template <class T>
const Matrix<T>& BatchedBilinearMLP<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    batched_backward_params(down, hidden_, dY);
    batched_backward_input(down, dY, d_hidden_);
    multiply_by_derivative<T>(activation, {pre_.data(), pre_.size()}, {d_hidden_.data(), d_hidden_.size()});
    ensure_shape(d_q_, d_hidden_.shape()[0], d_hidden_.shape()[1]);
    ensure_shape(d_k_, d_hidden_.shape()[0], d_hidden_.shape()[1]);
    for (std::size_t r = 0; r < q.size(); ++r) {
        const T *ds = d_hidden_.data(), *a = qx_[r].data(), *b = kx_[r].data();
        T *dq = d_q_.data(), *dk = d_k_.data();
        for (std::size_t i = 0; i < d_hidden_.size(); ++i) {
            dq[i] = ds[i] * b[i];
            dk[i] = ds[i] * a[i];
        }
        batched_backward_params(q[r], *input_, d_q_);
        batched_backward_params(k[r], *input_, d_k_);
        if (need_input_grad) {
            batched_backward_input(q[r], d_q_, input_grad_, r == 0 ? T(0) : T(1));
            batched_backward_input(k[r], d_k_, input_grad_, T(1));
        }
    }
    if (!need_input_grad) input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T>
void BatchedBilinearMLP<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    for (std::size_t r = 0; r < q.size(); ++r) {
        q[r].collect_parameters(prefix + "q" + std::to_string(r) + ".", out);
        k[r].collect_parameters(prefix + "k" + std::to_string(r) + ".", out);
    }
    down.collect_parameters(prefix + "down.", out);
}

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

#define FFNLAB_INSTANTIATE(T)                                                                                     \
    template class BatchedLinear<T>;                                                                              \
    template class BatchedMLP<T>;                                                                                 \
    template class BatchedGatedMLP<T>;                                                                            \
    template class BatchedBilinearMLP<T>;                                                                         \
    template class BatchedLayerNorm<T>;                                                                           \
    template class BatchedRMSNorm<T>;                                                                             \
    template void set_instance<T>(Module<T>&, std::size_t, Module<T>&);                                           \
    template void get_instance<T>(Module<T>&, std::size_t, Module<T>&);                                           \
    template void batched_forward<T>(const BatchedLinear<T>&, const Matrix<T>&, Matrix<T>&, bool, RowHook<T>);    \
    template void batched_backward_params<T>(BatchedLinear<T>&, const Matrix<T>&, const Matrix<T>&);              \
    template void batched_backward_input<T>(const BatchedLinear<T>&, const Matrix<T>&, Matrix<T>&, T, const Matrix<T>*, \
                                            RowHook<T>);
FFNLAB_INSTANTIATE(float)
FFNLAB_INSTANTIATE(double)
#undef FFNLAB_INSTANTIATE

}  // namespace ffn::nn
