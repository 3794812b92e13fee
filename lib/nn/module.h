#pragma once
// The layer interface of the training library. A Module maps a batch (one
// token per row) forward, keeping what its backward pass needs, and maps the
// gradient of the loss with respect to its output back to its input while
// writing the gradients of its parameters.
//
// Conventions:
//  - forward returns a reference to a buffer the module owns; it stays valid
//    until the next forward. The input X must stay alive until backward.
//  - backward *writes* (does not accumulate) every parameter gradient, from
//    the last forward. With need_input_grad false it skips dL/dX (the first
//    layer's input needs none) and returns an empty matrix.
//  - buffers are reused between steps of the same shape: a training step
//    allocates nothing after the first.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "nn/tensor.h"

namespace ffn::nn {

// A named parameter tensor and its gradient, for optimizers, initialisers,
// analysis and weight files ("up.weight", "down.bias", ...).
template <class T>
struct ParamRef {
    std::string name;
    std::vector<std::size_t> shape;
    T* value = nullptr;
    T* grad = nullptr;
    std::size_t size() const {
        std::size_t n = 1;
        for (auto s : shape) n *= s;
        return n;
    }
};

template <class T>
std::size_t parameter_count(const std::vector<ParamRef<T>>& params) {
    std::size_t n = 0;
    for (const auto& p : params) n += p.size();
    return n;
}

// Called after each hidden activation with (hidden layer index, activations);
// may read or overwrite them (ablations, firing counts).
template <class T>
using HiddenHook = std::function<void(std::size_t, Matrix<T>&)>;

template <class T>
class Module {
public:
    virtual ~Module() = default;
    virtual const Matrix<T>& forward(const Matrix<T>& X) = 0;
    virtual const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) = 0;
    virtual void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) = 0;

    // A forward pass with `temporary_hook` in place of the module's hook;
    // returns a copy of the output (analysis code, not training loops).
    Matrix<T> forward_with_hook(const Matrix<T>& X, const HiddenHook<T>& temporary_hook = {}) {
        HiddenHook<T> saved = std::exchange(hook, temporary_hook);
        Matrix<T> Y = forward(X);
        hook = std::move(saved);
        return Y;
    }

    std::vector<ParamRef<T>> parameters() {
        std::vector<ParamRef<T>> out;
        collect_parameters("", out);
        return out;
    }

    HiddenHook<T> hook;
};

// Gives M the shape rows x cols, allocating only when the shape changes.
template <class T>
void ensure_shape(Matrix<T>& M, std::size_t rows, std::size_t cols) {
    if (M.shape()[0] != rows || M.shape()[1] != cols) M = Matrix<T>::from_shape({rows, cols});
}

}  // namespace ffn::nn
