#pragma once
// Linear layer y = x W^T + b in PyTorch's nn.Linear layout: weight is
// (out_features, in_features), bias is (out_features). The free functions
// below are the fused building blocks the feed-forward modules share.
#include <cstddef>
#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "nn/activation.h"
#include "nn/module.h"

namespace ffn::nn {

template <class T>
class Linear : public Module<T> {
public:
    Linear() = default;
    // Parameters start at zero; an initialiser or explicit values fill them.
    Linear(std::size_t in_features, std::size_t out_features, bool bias = true);

    std::size_t in_features() const { return weight.shape()[1]; }
    std::size_t out_features() const { return weight.shape()[0]; }
    bool has_bias() const { return bias.size() != 0; }

    const Matrix<T>& forward(const Matrix<T>& X) override;
    const Matrix<T>& backward(const Matrix<T>& dY, bool need_input_grad = true) override;
    void collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) override;

    Matrix<T> weight, weight_grad;
    Vector<T> bias, bias_grad;

private:
    const Matrix<T>* input_ = nullptr;
    Matrix<T> output_, input_grad_;
};

// The stacked weights of I linear layers of one shape, the layer of the
// batched blocks (nn/batched.h): weight [I, out, in] (stored as [I * out,
// in]), bias [I, out]. Its inputs and outputs stack the instances'
// [tokens, width] matrices, instance-major.
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

// ---------------------------------------------------------------------------
// Fused pieces, for Linear and BatchedLinear alike: a BatchedLinear's
// instance i gets the product and epilogue a Linear of its weights gets.
// Each product goes through gemm once; work on its output rides in the gemm
// epilogue while the tile is in cache. Operands of the wrong shape throw.

// A caller's own work on a finished stretch of a product's output, run by
// the gemm epilogue while the tile is in cache, on whichever gemm thread
// finished it: `row` is the output at (i, j0), n values long. A stretch may
// run on over several whole rows, so an index into a matrix of the output's
// shape is i * columns + j0 + k for the k-th value. For a BatchedLinear,
// i numbers the rows across the whole stack.
template <class T>
struct RowHook {
    void (*fn)(T* row, std::int64_t i, std::int64_t j0, std::int64_t n, void* context) = nullptr;
    void* context = nullptr;
};

// Y = X W^T + b, then act(.) when `act` is given; keeps the pre-activation
// in `pre` when `pre` is non-null (backward needs it unless
// derivative_from_output(act)). Or, instead of an activation, `then` on the
// finished output.
template <class T>
void linear_forward(const Linear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, const Activation* act = nullptr,
                    Matrix<T>* pre = nullptr, RowHook<T> then = {});

template <class T>
void linear_forward(const BatchedLinear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, const Activation* act = nullptr,
                    Matrix<T>* pre = nullptr, RowHook<T> then = {});

// X W^T + b as a new matrix, with no state kept (analysis of a const layer).
template <class T>
Matrix<T> apply(const Linear<T>& layer, const Matrix<T>& X) {
    Matrix<T> Y;
    linear_forward(layer, X, Y);
    return Y;
}

// weight_grad = dY^T X and bias_grad = column sums of dY.
template <class T>
void linear_backward_params(Linear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY);
template <class T>
void linear_backward_params(BatchedLinear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY);

// dX = beta * dX + dY W; then, when `act` is given, dX *= act'(z) with z the
// saved pre-activation (or the activation's output, for relu). Or, instead
// of an activation, `then` on the finished dX.
template <class T>
void linear_backward_input(const Linear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, T beta = T(0),
                           const Activation* act = nullptr, const Matrix<T>* z = nullptr, RowHook<T> then = {});
template <class T>
void linear_backward_input(const BatchedLinear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, T beta = T(0),
                           const Activation* act = nullptr, const Matrix<T>* z = nullptr, RowHook<T> then = {});

}  // namespace ffn::nn
