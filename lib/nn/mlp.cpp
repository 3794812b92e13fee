#include "nn/mlp.h"

#include <span>
#include <utility>

#include "core/error.h"
#include "nn/row_hooks.h"

namespace ffn::nn {

std::string mlp_layer_name(std::size_t i, std::size_t count) {
    if (i == 0) return "up";
    if (i + 1 == count) return "down";
    return "mid" + std::to_string(i);
}

namespace {

template <class T>
std::span<T> all(Matrix<T>& M) {
    return {M.data(), M.size()};
}
template <class T>
std::span<const T> all(const Matrix<T>& M) {
    return {M.data(), M.size()};
}

}  // namespace

// ---------------------------------------------------------------------------
// MLP

template <class T, class Layer>
MLPOf<T, Layer>::MLPOf(std::vector<Layer> layers_, Activation act) : layers(std::move(layers_)), activation(act) {
    derivative_.resize(layers.size());
    out_.resize(layers.size());
    grad_.resize(layers.size());
}

template <class T>
MLP<T>::MLP(const std::vector<std::size_t>& widths, Activation act, bool bias)
    : MLPOf<T, Linear<T>>(chain_of<Linear<T>>("MLP", widths, bias), act) {}

template <class T, class Layer>
const Matrix<T>& MLPOf<T, Layer>::forward(const Matrix<T>& X) {
    input_ = &X;
    const bool smooth = !derivative_from_output(activation);
    const Matrix<T>* in = &X;
    for (std::size_t l = 0; l < layers.size(); ++l) {
        if (l + 1 == layers.size()) {
            linear_forward(layers[l], *in, out_[l]);
        } else if (smooth) {
            ensure_shape(derivative_[l], in->shape()[0], layers[l].out_features());
            hooks::KeptRows<T> keep{activation, derivative_[l].data(), static_cast<std::int64_t>(layers[l].out_features())};
            linear_forward<T>(layers[l], *in, out_[l], nullptr, nullptr, {hooks::activate_rows<T>, &keep});
            if (this->hook) this->hook(l, out_[l]);
        } else {
            linear_forward(layers[l], *in, out_[l], &activation);
            if (this->hook) this->hook(l, out_[l]);
        }
        in = &out_[l];
    }
    return out_.back();
}

template <class T, class Layer>
const Matrix<T>& MLPOf<T, Layer>::backward(const Matrix<T>& dY, bool need_input_grad) {
    const bool smooth = !derivative_from_output(activation);
    const Matrix<T>* g = &dY;
    for (std::size_t l = layers.size(); l-- > 0;) {
        linear_backward_params(layers[l], l == 0 ? *input_ : out_[l - 1], *g);
        if (l > 0) {
            // dL/dz of the layer below, with act' fused into the product.
            if (smooth) {
                hooks::KeptRows<T> kept{activation, derivative_[l - 1].data(),
                                       static_cast<std::int64_t>(layers[l - 1].out_features())};
                linear_backward_input<T>(layers[l], *g, grad_[l - 1], T(0), nullptr, nullptr,
                                         {hooks::times_derivative_rows<T>, &kept});
            } else {
                linear_backward_input(layers[l], *g, grad_[l - 1], T(0), &activation, &out_[l - 1]);
            }
            g = &grad_[l - 1];
        } else if (need_input_grad) {
            linear_backward_input(layers[0], *g, input_grad_);
            return input_grad_;
        }
    }
    input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T, class Layer>
void MLPOf<T, Layer>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    for (std::size_t i = 0; i < layers.size(); ++i)
        layers[i].collect_parameters(prefix + mlp_layer_name(i, layers.size()) + ".", out);
}

// ---------------------------------------------------------------------------
// GatedMLP

const std::vector<std::string>& gated_variant_names() {
    static const std::vector<std::string> names = {"glu", "reglu", "geglu", "swiglu", "bilinear"};
    return names;
}

Activation gated_variant_activation(const std::string& variant) {
    if (variant == "glu") return Activation::sigmoid;
    if (variant == "reglu") return Activation::relu;
    if (variant == "geglu") return Activation::gelu;
    if (variant == "swiglu") return Activation::silu;
    if (variant == "bilinear") return Activation::identity;
    throw Error("unknown gated variant '" + variant + "' (expected glu, reglu, geglu, swiglu or bilinear)");
}

template <class T, class Layer>
GatedMLPOf<T, Layer>::GatedMLPOf(Layer gate_, Layer up_, Layer down_, Activation act)
    : gate(std::move(gate_)), up(std::move(up_)), down(std::move(down_)), activation(act) {}

template <class T>
GatedMLP<T>::GatedMLP(std::size_t d, std::size_t hidden, Activation act, bool bias)
    : GatedMLPOf<T, Linear<T>>(Linear<T>(d, hidden, bias), Linear<T>(d, hidden, bias), Linear<T>(hidden, d, bias), act) {}

template <class T, class Layer>
const Matrix<T>& GatedMLPOf<T, Layer>::forward(const Matrix<T>& X) {
    input_ = &X;
    // A smooth activation keeps act'(g) from the forward pass, so the
    // backward multiplies by it instead of evaluating act' again: the same
    // bits (activation.h), one exp or erfc fewer per value.
    if (!derivative_from_output(activation)) {
        ensure_shape(kept_gate_, X.shape()[0], gate.out_features());
        hooks::KeptRows<T> keep{activation, kept_gate_.data(), static_cast<std::int64_t>(gate.out_features())};
        linear_forward<T>(gate, X, act_gate_, nullptr, nullptr, {hooks::activate_rows<T>, &keep});
    } else {
        linear_forward(gate, X, act_gate_, &activation, &kept_gate_);
    }
    ensure_shape(hidden_, X.shape()[0], gate.out_features());
    hooks::GateProduct<T> product{act_gate_.data(), hidden_.data(), static_cast<std::int64_t>(gate.out_features())};
    linear_forward<T>(up, X, up_out_, nullptr, nullptr, {hooks::gate_product_rows<T>, &product});
    if (this->hook) this->hook(0, hidden_);
    linear_forward(down, hidden_, out_);
    return out_;
}

template <class T, class Layer>
const Matrix<T>& GatedMLPOf<T, Layer>::backward(const Matrix<T>& dY, bool need_input_grad) {
    linear_backward_params(down, hidden_, dY);
    ensure_shape(d_gate_, dY.shape()[0], gate.out_features());
    hooks::GateBackward<T> chain{activation, !derivative_from_output(activation), act_gate_.data(), up_out_.data(),
                                 kept_gate_.data(), d_gate_.data(), static_cast<std::int64_t>(gate.out_features())};
    linear_backward_input<T>(down, dY, d_up_, T(0), nullptr, nullptr, {hooks::gate_backward_rows<T>, &chain});
    linear_backward_params(gate, *input_, d_gate_);
    linear_backward_params(up, *input_, d_up_);
    if (!need_input_grad) {
        input_grad_ = Matrix<T>();
        return input_grad_;
    }
    linear_backward_input(gate, d_gate_, input_grad_);
    linear_backward_input(up, d_up_, input_grad_, T(1));
    return input_grad_;
}

template <class T, class Layer>
void GatedMLPOf<T, Layer>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    gate.collect_parameters(prefix + "gate.", out);
    up.collect_parameters(prefix + "up.", out);
    down.collect_parameters(prefix + "down.", out);
}

// ---------------------------------------------------------------------------
// BilinearMLP

template <class T, class Layer>
BilinearMLPOf<T, Layer>::BilinearMLPOf(std::vector<Layer> q_, std::vector<Layer> k_, Layer down_, Activation act)
    : q(std::move(q_)), k(std::move(k_)), down(std::move(down_)), activation(act) {
    if (q.empty() || q.size() != k.size()) throw Error("BilinearMLP: rank must be at least 1");
    qx_.resize(q.size());
    kx_.resize(k.size());
}

template <class T>
BilinearMLP<T>::BilinearMLP(std::size_t d, std::size_t hidden, std::size_t rank, Activation act, bool bias)
    : BilinearMLPOf<T, Linear<T>>(rank_of<Linear<T>>("BilinearMLP", rank, d, hidden, bias),
                                  rank_of<Linear<T>>("BilinearMLP", rank, d, hidden, bias),
                                  Linear<T>(hidden, d, bias), act) {}

template <class T, class Layer>
const Matrix<T>& BilinearMLPOf<T, Layer>::forward(const Matrix<T>& X) {
    input_ = &X;
    ensure_shape(pre_, X.shape()[0], down.in_features());
    std::fill(pre_.begin(), pre_.end(), T(0));
    for (std::size_t r = 0; r < q.size(); ++r) {
        linear_forward(q[r], X, qx_[r]);
        linear_forward(k[r], X, kx_[r]);
        auto s = all(pre_);
        auto a = all(std::as_const(qx_[r])), b = all(std::as_const(kx_[r]));
        for (std::size_t i = 0; i < s.size(); ++i) s[i] += a[i] * b[i];
    }
    hidden_ = pre_;
    activate_inplace<T>(activation, all(hidden_));
    if (this->hook) this->hook(0, hidden_);
    linear_forward(down, hidden_, out_);
    return out_;
}

template <class T, class Layer>
const Matrix<T>& BilinearMLPOf<T, Layer>::backward(const Matrix<T>& dY, bool need_input_grad) {
    linear_backward_params(down, hidden_, dY);
    linear_backward_input(down, dY, d_hidden_);
    multiply_by_derivative<T>(activation, all(std::as_const(pre_)), all(d_hidden_));  // now dL/ds
    ensure_shape(d_q_, d_hidden_.shape()[0], d_hidden_.shape()[1]);
    ensure_shape(d_k_, d_hidden_.shape()[0], d_hidden_.shape()[1]);
    for (std::size_t r = 0; r < q.size(); ++r) {
        // s = sum_r (x Q_r^T) * (x K_r^T):  dL/d(xQ_r^T) = ds * (x K_r^T), and symmetrically.
        auto ds = all(std::as_const(d_hidden_)), a = all(std::as_const(qx_[r])), b = all(std::as_const(kx_[r]));
        auto dq = all(d_q_), dk = all(d_k_);
        for (std::size_t i = 0; i < ds.size(); ++i) {
            dq[i] = ds[i] * b[i];
            dk[i] = ds[i] * a[i];
        }
        linear_backward_params(q[r], *input_, d_q_);
        linear_backward_params(k[r], *input_, d_k_);
        if (need_input_grad) {
            linear_backward_input(q[r], d_q_, input_grad_, r == 0 ? T(0) : T(1));
            linear_backward_input(k[r], d_k_, input_grad_, T(1));
        }
    }
    if (!need_input_grad) input_grad_ = Matrix<T>();
    return input_grad_;
}

template <class T, class Layer>
void BilinearMLPOf<T, Layer>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    for (std::size_t r = 0; r < q.size(); ++r) {
        q[r].collect_parameters(prefix + "q" + std::to_string(r) + ".", out);
        k[r].collect_parameters(prefix + "k" + std::to_string(r) + ".", out);
    }
    down.collect_parameters(prefix + "down.", out);
}

// ---------------------------------------------------------------------------

template <class T>
AttentionProjections<T>::AttentionProjections(std::size_t d, bool bias)
    : q(d, d, bias), k(d, d, bias), v(d, d, bias), o(d, d, bias) {}

template <class T>
std::vector<ParamRef<T>> AttentionProjections<T>::parameters() {
    std::vector<ParamRef<T>> out;
    q.collect_parameters("q.", out);
    k.collect_parameters("k.", out);
    v.collect_parameters("v.", out);
    o.collect_parameters("o.", out);
    return out;
}

// Each block over both layer types: the batched forms (nn/batched.h) derive
// from the BatchedLinear instances.
#define FFNLAB_INSTANTIATE(T)                   \
    template class MLPOf<T, Linear<T>>;         \
    template class MLPOf<T, BatchedLinear<T>>;  \
    template class MLP<T>;                      \
    template class GatedMLPOf<T, Linear<T>>;    \
    template class GatedMLPOf<T, BatchedLinear<T>>; \
    template class GatedMLP<T>;                 \
    template class BilinearMLPOf<T, Linear<T>>; \
    template class BilinearMLPOf<T, BatchedLinear<T>>; \
    template class BilinearMLP<T>;              \
    template struct AttentionProjections<T>;
FFNLAB_INSTANTIATE(float)
FFNLAB_INSTANTIATE(double)
#undef FFNLAB_INSTANTIATE

}  // namespace ffn::nn
