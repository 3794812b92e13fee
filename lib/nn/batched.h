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

// The blocks of nn/mlp.h over BatchedLinear layers: their passes, written
// once, with each product one gemm_batched call over the instances.
template <class T>
class BatchedMLP : public MLPOf<T, BatchedLinear<T>> {
public:
    BatchedMLP(std::size_t instances, const std::vector<std::size_t>& widths, Activation act, bool bias = true);
};

template <class T>
class BatchedGatedMLP : public GatedMLPOf<T, BatchedLinear<T>> {
public:
    BatchedGatedMLP(std::size_t instances, std::size_t d, std::size_t hidden, Activation act, bool bias = false);
};

template <class T>
class BatchedBilinearMLP : public BilinearMLPOf<T, BatchedLinear<T>> {
public:
    BatchedBilinearMLP(std::size_t instances, std::size_t d, std::size_t hidden, std::size_t rank, Activation act,
                       bool bias = false);
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
