#pragma once
// Feed-forward blocks built from Linear (or BatchedLinear) layers, each with
// forward and backward passes (module.h states the conventions).
//
//   MLP:          x -> act(x W_up^T + b) -> ... -> h W_down^T + b   (any depth)
//   GatedMLP:     x -> down( act(gate(x)) * up(x) )                 (GLU family)
//   BilinearMLP:  x -> down( act( sum_r (x Q_r^T) * (x K_r^T) ) )   (doc 004)
//   AttentionProjections: the four d x d projections of an attention block,
//   kept only so parameter budgets can be compared by instantiation.
//
// Each block's passes are written once, over its layer type: Linear here,
// BatchedLinear for the batched forms (nn/batched.h), whose layers go
// through the same products instance by instance, so each instance gets the
// bits of the block alone.
#include <memory>
#include <string>
#include <vector>

#include "core/error.h"
#include "nn/activation.h"
#include "nn/linear.h"

namespace ffn::nn {

// Layer i of `count`'s parameter prefix: "up", "mid1", "mid2", ..., "down"
// (a one-layer MLP is "up").
std::string mlp_layer_name(std::size_t i, std::size_t count);

// The layers the blocks are made of, each as Layer(stack..., in, out,
// bias): no `stack` for Linear, the instance count for BatchedLinear.
// A chain of widths {d_in, hidden..., d_out}, for an MLP:
template <class Layer, class... Stack>
std::vector<Layer> chain_of(const char* block, const std::vector<std::size_t>& widths, bool bias, Stack... stack) {
    if (widths.size() < 2) throw Error(std::string(block) + " needs at least an input and an output width");
    std::vector<Layer> layers;
    layers.reserve(widths.size() - 1);  // a layer is copied, not moved, when the vector grows (Module's hook)
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) layers.emplace_back(stack..., widths[i], widths[i + 1], bias);
    return layers;
}
// `rank` layers of one shape, for a bilinear block's Q_r or K_r:
template <class Layer, class... Stack>
std::vector<Layer> rank_of(const char* block, std::size_t rank, std::size_t in, std::size_t out, bool bias,
                           Stack... stack) {
    if (rank < 1) throw Error(std::string(block) + ": rank must be at least 1");
    std::vector<Layer> layers;
    layers.reserve(rank);
    for (std::size_t r = 0; r < rank; ++r) layers.emplace_back(stack..., in, out, bias);
    return layers;
}

template <class T, class Layer>
class MLPOf : public Module<T> {
public:
    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    // Parameter names: mlp_layer_name's, then "weight" or "bias".
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    std::vector<Layer> layers;
    Activation activation;

protected:
    MLPOf(std::vector<Layer> layers, Activation act);

private:
    const Matrix<T>* input_ = nullptr;
    std::vector<Matrix<T>> derivative_, out_, grad_;  // per layer: act'(z) (smooth act only), output, dL/dz
    Matrix<T> input_grad_;
};

template <class T>
class MLP : public MLPOf<T, Linear<T>> {
public:
    // widths = {d_in, hidden..., d_out}; at least two entries.
    MLP(const std::vector<std::size_t>& widths, Activation act, bool bias = true);
};

// The GLU variants by name: glu (sigmoid gate), reglu, geglu, swiglu,
// bilinear (no activation).
const std::vector<std::string>& gated_variant_names();
Activation gated_variant_activation(const std::string& variant);

template <class T, class Layer>
class GatedMLPOf : public Module<T> {
public:
    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    Layer gate, up, down;
    Activation activation;

protected:
    GatedMLPOf(Layer gate, Layer up, Layer down, Activation act);

private:
    const Matrix<T>* input_ = nullptr;
    // kept_gate_: act'(g) for a smooth activation, else the pre-activation g.
    Matrix<T> kept_gate_, act_gate_, up_out_, hidden_, out_, d_gate_, d_up_, input_grad_;
};

template <class T>
class GatedMLP : public GatedMLPOf<T, Linear<T>> {
public:
    GatedMLP(std::size_t d, std::size_t hidden, Activation act, bool bias = false);
};

template <class T, class Layer>
class BilinearMLPOf : public Module<T> {
public:
    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    // Names: "q0", "k0", "q1", ..., "down".
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    std::vector<Layer> q, k;
    Layer down;
    Activation activation;

protected:
    BilinearMLPOf(std::vector<Layer> q, std::vector<Layer> k, Layer down, Activation act);

private:
    const Matrix<T>* input_ = nullptr;
    std::vector<Matrix<T>> qx_, kx_;
    Matrix<T> pre_, hidden_, out_, d_hidden_, d_q_, d_k_, input_grad_;
};

template <class T>
class BilinearMLP : public BilinearMLPOf<T, Linear<T>> {
public:
    // rank R >= 1 pairs (Q_r, K_r), each hidden x d; act applied to the sum.
    BilinearMLP(std::size_t d, std::size_t hidden, std::size_t rank, Activation act, bool bias = false);
};

template <class T>
struct AttentionProjections {
    explicit AttentionProjections(std::size_t d, bool bias = false);
    std::vector<ParamRef<T>> parameters();
    Linear<T> q, k, v, o;
};

}  // namespace ffn::nn
