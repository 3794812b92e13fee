#pragma once
// Many small models of one shape trained as one computation: instance i of
// a batched layer is the layer it would be alone, its weights a slice of one
// stacked tensor, so each product is one gemm_batched call over all
// instances and an optimizer updates the whole stack as one block. Inputs
// and outputs stack the instances' [tokens, width] matrices into one
// [instances * tokens, width] matrix, instance-major. Every instance's
// values have the bits it would have trained alone (tests/nn/test_batched).
#include <cstddef>
#include <string>
#include <vector>

#include "nn/activation.h"
#include "nn/linear.h"
#include "nn/mlp.h"
#include "nn/module.h"

namespace ffn::nn {

template <class T>
class BatchedLinear {
public:
    BatchedLinear(std::size_t instances, std::size_t in_features, std::size_t out_features, bool bias = true);

    std::size_t instances() const { return instances_; }
    std::size_t in_features() const { return weight.shape()[1]; }
    std::size_t out_features() const { return weight.shape()[0] / instances_; }
    bool has_bias() const { return bias.size() != 0; }

    // Instance i's parameters are these of `layer` (and back).
    void set_instance(std::size_t i, const Linear<T>& layer);
    void get_instance(std::size_t i, Linear<T>& layer) const;

    Matrix<T> weight, weight_grad;  // [instances * out, in]: instance i's rows i*out ..
    Matrix<T> bias, bias_grad;      // [instances, out], or [instances, 0]

private:
    std::size_t instances_;
};

// Y = X W^T + b per instance, then act(.) (kept as in linear_forward: `then`
// runs on the finished stack, its rows numbered across the instances).
template <class T>
void batched_forward(const BatchedLinear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, bool relu = false,
                     RowHook<T> then = {});
// weight_grad and bias_grad from the stacked X and dY.
template <class T>
void batched_backward_params(BatchedLinear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY);
// dX = dY W per instance; then dX *= 1[relu_out > 0] when relu_out is given,
// or `then` on the finished stack.
template <class T>
void batched_backward_input(const BatchedLinear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX,
                            const Matrix<T>* relu_out = nullptr, RowHook<T> then = {});

// MLP's batched form: I nets of widths {d_in, hidden..., d_out}.
template <class T>
class BatchedMLP {
public:
    BatchedMLP(std::size_t instances, const std::vector<std::size_t>& widths, Activation act, bool bias = true);

    std::size_t instances() const { return instances_; }
    // Instance i's parameters are these of `net` (of the same widths), and back.
    void set_instance(std::size_t i, const MLP<T>& net);
    void get_instance(std::size_t i, MLP<T>& net) const;

    const Matrix<T>& forward(const Matrix<T>& X);  // X: [instances * tokens, d_in]
    void backward(const Matrix<T>& dY);            // parameters' gradients (x needs none)
    std::vector<ParamRef<T>> parameters();

    std::vector<BatchedLinear<T>> layers;
    Activation activation;

private:
    std::size_t instances_;
    const Matrix<T>* input_ = nullptr;
    std::vector<Matrix<T>> derivative_, out_, grad_;
};

// GatedMLP's batched form: I blocks down(act(gate(x)) * up(x)).
template <class T>
class BatchedGatedMLP {
public:
    BatchedGatedMLP(std::size_t instances, std::size_t d, std::size_t hidden, Activation act, bool bias = false);

    std::size_t instances() const { return gate.instances(); }
    void set_instance(std::size_t i, const GatedMLP<T>& block);
    void get_instance(std::size_t i, GatedMLP<T>& block) const;

    const Matrix<T>& forward(const Matrix<T>& X);  // X: [instances * tokens, d]
    void backward(const Matrix<T>& dY);            // parameters' gradients (x needs none)
    std::vector<ParamRef<T>> parameters();

    BatchedLinear<T> gate, up, down;
    Activation activation;

private:
    const Matrix<T>* input_ = nullptr;
    Matrix<T> pre_gate_, act_gate_, up_out_, hidden_, out_, d_gate_, d_up_;
};

}  // namespace ffn::nn
