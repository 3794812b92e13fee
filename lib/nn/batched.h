#pragma once
// Many small models of one shape trained as one computation. A batched
// module is a Module whose rows are a stack of its instances' [tokens,
// width] matrices, instance-major ([instances * tokens, width]); instance i
// is the module it would be alone, its parameters a contiguous slice of each
// stacked tensor. Each product is one gemm_batched call over all instances,
// and an optimizer updates the whole stack as one block. Every instance's
// values have the bits it would have trained alone (tests/nn/test_batched).
//
// Modules that act on each row alone batch without a form of their own: a
// PreNormResidual around a batched norm and a batched feed-forward module is
// the residual block's batched form. A batched module's hook (Module::hook)
// sees the whole stack of hidden activations, [instances * tokens, hidden].
#include <cstddef>
#include <string>
#include <vector>

#include "nn/activation.h"
#include "nn/linear.h"
#include "nn/mlp.h"
#include "nn/module.h"

namespace ffn::nn {

// Instance i's parameters of a batched module are `alone`'s, and back: the
// two modules name the same parameters in the same order, each batched one
// of the alone one's shape with the instances in front. Another module
// (another kind, width or depth) is refused.
template <class T>
void set_instance(Module<T>& batched, std::size_t i, Module<T>& alone);
template <class T>
void get_instance(Module<T>& batched, std::size_t i, Module<T>& alone);

// The stacked weights of I linear layers: weight [I, out, in] (stored as
// [I * out, in]), bias [I, out]. A component of the batched modules.
template <class T>
class BatchedLinear {
public:
    BatchedLinear(std::size_t instances, std::size_t in_features, std::size_t out_features, bool bias = true);

    std::size_t instances() const { return instances_; }
    std::size_t in_features() const { return weight.shape()[1]; }
    std::size_t out_features() const { return weight.shape()[0] / instances_; }
    bool has_bias() const { return bias.size() != 0; }
    // As Linear's "weight" and "bias", with the instances first.
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out);

    Matrix<T> weight, weight_grad;  // [instances * out, in]: instance i's rows i*out ..
    Matrix<T> bias, bias_grad;      // [instances, out], or [instances, 0]

private:
    std::size_t instances_;
};

// Y = X W^T + b per instance, then the ReLU or `then` (not both). As in
// linear_forward, `then` runs in the gemm epilogue on each finished stretch
// of the output, its rows numbered across the stack.
template <class T>
void batched_forward(const BatchedLinear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, bool relu = false,
                     RowHook<T> then = {});
// weight_grad and bias_grad from the stacked X and dY.
template <class T>
void batched_backward_params(BatchedLinear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY);
// dX = beta * dX + dY W per instance; then dX *= 1[relu_out > 0] when
// relu_out is given, or `then` (not both), as in batched_forward.
template <class T>
void batched_backward_input(const BatchedLinear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, T beta = T(0),
                            const Matrix<T>* relu_out = nullptr, RowHook<T> then = {});

// MLP's batched form: I nets of widths {d_in, hidden..., d_out}.
template <class T>
class BatchedMLP : public Module<T> {
public:
    BatchedMLP(std::size_t instances, const std::vector<std::size_t>& widths, Activation act, bool bias = true);

    const Matrix<T>& forward(const Matrix<T>& X) override;  // X: [instances * tokens, d_in]
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;  // MLP's names

    std::vector<BatchedLinear<T>> layers;
    Activation activation;

private:
    const Matrix<T>* input_ = nullptr;
    std::vector<Matrix<T>> derivative_, out_, grad_;
    Matrix<T> input_grad_;
};

// GatedMLP's batched form: I blocks down(act(gate(x)) * up(x)).
template <class T>
class BatchedGatedMLP : public Module<T> {
public:
    BatchedGatedMLP(std::size_t instances, std::size_t d, std::size_t hidden, Activation act, bool bias = false);

    const Matrix<T>& forward(const Matrix<T>& X) override;  // X: [instances * tokens, d]
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    BatchedLinear<T> gate, up, down;
    Activation activation;

private:
    const Matrix<T>* input_ = nullptr;
    Matrix<T> pre_gate_, act_gate_, up_out_, hidden_, out_, d_gate_, d_up_, input_grad_;
};

// BilinearMLP's batched form: I blocks down(act(sum_r (x Q_r^T) * (x K_r^T))).
template <class T>
class BatchedBilinearMLP : public Module<T> {
public:
    BatchedBilinearMLP(std::size_t instances, std::size_t d, std::size_t hidden, std::size_t rank, Activation act,
                       bool bias = false);

    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    std::vector<BatchedLinear<T>> q, k;
    BatchedLinear<T> down;
    Activation activation;

private:
    const Matrix<T>* input_ = nullptr;
    std::vector<Matrix<T>> qx_, kx_;
    Matrix<T> pre_, hidden_, out_, d_hidden_, d_q_, d_k_, input_grad_;
};

// LayerNorm's and RMSNorm's batched forms: instance i's rows are normalised
// with its own scale (and shift), weight [instances, d].
template <class T>
class BatchedLayerNorm : public Module<T> {
public:
    BatchedLayerNorm(std::size_t instances, std::size_t d, double eps = 1e-5);
    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    Matrix<T> weight, bias, weight_grad, bias_grad;
    double eps;

private:
    Matrix<T> xhat_, out_, input_grad_;
    Vector<T> rstd_;
};

template <class T>
class BatchedRMSNorm : public Module<T> {
public:
    BatchedRMSNorm(std::size_t instances, std::size_t d, double eps = 1e-6);
    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    Matrix<T> weight, weight_grad;
    double eps;

private:
    Matrix<T> xhat_, out_, input_grad_;
    Vector<T> rstd_;
};

}  // namespace ffn::nn
