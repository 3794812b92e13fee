#pragma once
// Feed-forward blocks built from Linear layers.
//
//   MLP:       x -> act(x W_up^T + b) -> ... -> h W_down^T + b   (any depth)
//   GatedMLP:  x -> down( act(gate(x)) * up(x) )                 (seed 004)
//   AttentionProjections: the four d x d projections of an attention block,
//   kept here only so parameter budgets can be compared by instantiation.
#include <functional>
#include <string>
#include <vector>

#include "nn/activation.h"
#include "nn/linear.h"

namespace ffn::nn {

// Called after each hidden activation with (hidden layer index, activations);
// may read or overwrite them (ablations, firing counts).
template <class T>
using HiddenHook = std::function<void(std::size_t, Matrix<T>&)>;

template <class T>
class MLP {
public:
    // widths = {d_in, hidden..., d_out}; at least two entries.
    MLP(const std::vector<std::size_t>& widths, Activation act, bool bias = true);

    Matrix<T> forward(const Matrix<T>& X, const HiddenHook<T>& hook = {}) const;
    std::vector<ParamRef<T>> parameters();

    // Parameter names: "up", "mid1", "mid2", ..., "down" (a one-layer MLP is "up").
    std::vector<Linear<T>> layers;
    Activation activation;
};

template <class T>
class GatedMLP {
public:
    GatedMLP(std::size_t d, std::size_t hidden, Activation act, bool bias = false);

    Matrix<T> forward(const Matrix<T>& X) const;
    std::vector<ParamRef<T>> parameters();

    Linear<T> gate, up, down;
    Activation activation;
};

template <class T>
struct AttentionProjections {
    explicit AttentionProjections(std::size_t d, bool bias = false);
    std::vector<ParamRef<T>> parameters();
    Linear<T> q, k, v, o;
};

}  // namespace ffn::nn
