#include "nn/linear.h"

#include <algorithm>
#include <span>
#include <vector>

#include "core/error.h"
#include "nn/row_hooks.h"

namespace ffn::nn {

namespace {

using gemm::Trans;

template <class T>
struct BackwardContext {
    Activation act;
    const T* z;
    std::int64_t ld;
};

template <class T>
void backward_rows(T* row, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const BackwardContext<T>*>(p);
    multiply_by_derivative<T>(c->act, std::span<const T>(c->z + i * c->ld + j0, static_cast<std::size_t>(n)),
                              std::span<T>(row, static_cast<std::size_t>(n)));
}

std::int64_t i64(std::size_t v) { return static_cast<std::int64_t>(v); }

}  // namespace

// Gradients are allocated but not filled: backward writes them whole before
// anything reads them, and untouched pages cost nothing for layers that are
// only counted or evaluated.
template <class T>
Linear<T>::Linear(std::size_t in_features, std::size_t out_features, bool with_bias)
    : weight(zeros<T, 2>({out_features, in_features})),
      weight_grad(Matrix<T>::from_shape({out_features, in_features})),
      bias(zeros<T, 1>({with_bias ? out_features : std::size_t{0}})),
      bias_grad(Vector<T>::from_shape({with_bias ? out_features : std::size_t{0}})) {}

namespace {

// The weights the products read, of one layer or a stack of them:
// instance i's weight is out x in at weight + i * out * in, its bias (when
// there is one) out values at bias + i * out.
template <class T>
struct Stack {
    const T* weight;
    const T* bias;
    std::size_t instances, in, out;
    const char* name;  // for errors
};

template <class T>
Stack<T> stack_of(const Linear<T>& layer) {
    return {layer.weight.data(), layer.has_bias() ? layer.bias.data() : nullptr, 1, layer.in_features(),
            layer.out_features(), "Linear"};
}

template <class T>
Stack<T> stack_of(const BatchedLinear<T>& layer) {
    return {layer.weight.data(), layer.has_bias() ? layer.bias.data() : nullptr, layer.instances(),
            layer.in_features(), layer.out_features(), "BatchedLinear"};
}

// Each instance's rows of the stacked M, an input (X, in features) or an
// output gradient (dY, out columns); a matrix that does not split into the
// instances' [tokens, width] blocks is a caller's error.
template <class T>
std::size_t tokens_of(const Stack<T>& s, const Matrix<T>& M, bool output_side, const char* pass) {
    const std::size_t width = output_side ? s.out : s.in;
    const std::string where = std::string(s.name) + pass + ": ";
    if (s.instances == 1) {
        if (M.shape()[1] != width)
            throw Error(where + (output_side ? "dY has " + std::to_string(M.shape()[1]) + " columns, layer has " +
                                                   std::to_string(width) + " outputs"
                                             : "input has " + std::to_string(M.shape()[1]) + " features, layer expects " +
                                                   std::to_string(width)));
        return M.shape()[0];
    }
    if (M.shape()[1] != width || M.shape()[0] % s.instances != 0)
        throw Error(where + "expected a stack of " + std::to_string(s.instances) + " [tokens, " + std::to_string(width) +
                    "] matrices, got " + std::to_string(M.shape()[0]) + " x " + std::to_string(M.shape()[1]));
    return M.shape()[0] / s.instances;
}

template <class T>
void forward(const Stack<T>& s, const Matrix<T>& X, Matrix<T>& Y, const Activation* act, Matrix<T>* pre, RowHook<T> then) {
    const std::size_t tokens = tokens_of(s, X, false, "");
    const std::size_t rows = s.instances * tokens;
    ensure_shape(Y, rows, s.out);
    gemm::Epilogue<T> ep;
    ep.bias = s.bias;
    hooks::KeptRows<T> ctx{};
    if (act && *act == Activation::relu && !pre) {
        ep.pointwise = gemm::Pointwise::relu;  // in the kernels' SIMD epilogue
    } else if (act && *act != Activation::identity) {
        if (pre) ensure_shape(*pre, rows, s.out);
        ctx = {*act, pre ? pre->data() : nullptr, i64(s.out)};
        ep.rowwise = hooks::keep_input_and_activate_rows<T>;
        ep.context = &ctx;
    }
    if (then.fn) {
        if (ep.rowwise || ep.pointwise != gemm::Pointwise::none || pre)
            throw Error("linear_forward: a row hook with an activation or a kept pre-activation");
        ep.rowwise = then.fn;
        ep.context = then.context;
    }
    gemm::gemm_batched<T>(i64(s.instances), Trans::no, Trans::yes, i64(tokens), i64(s.out), i64(s.in), T(1), X.data(),
                          i64(s.in), s.weight, i64(s.in), T(0), Y.data(), i64(s.out),
                          {.a = i64(tokens * s.in), .b = i64(s.out * s.in), .c = i64(tokens * s.out), .bias = i64(s.out)},
                          ep);
    if (pre && (!act || *act == Activation::identity)) *pre = Y;
}

// weight_grad = dY^T X and bias_grad = column sums of dY, per instance.
template <class T>
void backward_params(const Stack<T>& s, const Matrix<T>& X, const Matrix<T>& dY, T* weight_grad, T* bias_grad) {
    const std::size_t tokens = tokens_of(s, X, false, " backward");
    if (tokens_of(s, dY, true, " backward") != tokens)
        throw Error(std::string(s.name) + " backward: dY and X differ in tokens");
    // (out x tokens) . (tokens x in)
    gemm::gemm_batched<T>(i64(s.instances), Trans::yes, Trans::no, i64(s.out), i64(s.in), i64(tokens), T(1), dY.data(),
                          i64(s.out), X.data(), i64(s.in), T(0), weight_grad, i64(s.in),
                          {.a = i64(tokens * s.out), .b = i64(tokens * s.in), .c = i64(s.out * s.in)});
    if (bias_grad) {
        // Column sums of dY as the product ones^T dY: vectorised, with the
        // same fixed summation order as every other product.
        thread_local std::vector<T> ones;
        if (ones.size() < tokens) ones.assign(tokens, T(1));
        gemm::gemm_batched<T>(i64(s.instances), Trans::no, Trans::no, 1, i64(s.out), i64(tokens), T(1), ones.data(),
                              i64(tokens), dY.data(), i64(s.out), T(0), bias_grad, i64(s.out),
                              {.a = 0, .b = i64(tokens * s.out), .c = i64(s.out)});
    }
}

template <class T>
void backward_input(const Stack<T>& s, const Matrix<T>& dY, Matrix<T>& dX, T beta, const Activation* act,
                    const Matrix<T>* z, RowHook<T> then) {
    const std::size_t tokens = tokens_of(s, dY, true, " backward");
    const std::size_t rows = s.instances * tokens;
    if (beta == T(0))
        ensure_shape(dX, rows, s.in);
    else if (dX.shape()[0] != rows || dX.shape()[1] != s.in)
        throw Error(std::string(s.name) + " backward: accumulating into a dX of another shape");
    gemm::Epilogue<T> ep;
    BackwardContext<T> ctx{};
    if (act && *act == Activation::relu) {
        // relu'(z) > 0 exactly where z > 0, and where relu(z) > 0: z may be either.
        ep.pointwise = gemm::Pointwise::relu_grad;
        ep.aux = z->data();
        ep.ld_aux = i64(s.in);
    } else if (act && *act != Activation::identity) {
        ctx = {*act, z->data(), i64(s.in)};
        ep.rowwise = backward_rows<T>;
        ep.context = &ctx;
    }
    if (then.fn) {
        if (ep.rowwise || ep.pointwise != gemm::Pointwise::none)
            throw Error("linear_backward_input: an activation and a row hook");
        ep.rowwise = then.fn;
        ep.context = then.context;
    }
    // (tokens x out) . (out x in)
    gemm::gemm_batched<T>(i64(s.instances), Trans::no, Trans::no, i64(tokens), i64(s.in), i64(s.out), T(1), dY.data(),
                          i64(s.out), s.weight, i64(s.in), beta, dX.data(), i64(s.in),
                          {.a = i64(tokens * s.out), .b = i64(s.out * s.in), .c = i64(tokens * s.in), .aux = i64(tokens * s.in)},
                          ep);
}

}  // namespace

template <class T>
void linear_forward(const Linear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, const Activation* act, Matrix<T>* pre,
                    RowHook<T> then) {
    forward(stack_of(layer), X, Y, act, pre, then);
}

template <class T>
void linear_forward(const BatchedLinear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, const Activation* act,
                    Matrix<T>* pre, RowHook<T> then) {
    forward(stack_of(layer), X, Y, act, pre, then);
}

template <class T>
void linear_backward_params(Linear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY) {
    backward_params(stack_of(layer), X, dY, layer.weight_grad.data(), layer.has_bias() ? layer.bias_grad.data() : nullptr);
}

template <class T>
void linear_backward_params(BatchedLinear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY) {
    backward_params(stack_of(layer), X, dY, layer.weight_grad.data(), layer.has_bias() ? layer.bias_grad.data() : nullptr);
}

template <class T>
void linear_backward_input(const Linear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, T beta, const Activation* act,
                           const Matrix<T>* z, RowHook<T> then) {
    backward_input(stack_of(layer), dY, dX, beta, act, z, then);
}

template <class T>
void linear_backward_input(const BatchedLinear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, T beta,
                           const Activation* act, const Matrix<T>* z, RowHook<T> then) {
    backward_input(stack_of(layer), dY, dX, beta, act, z, then);
}

template <class T>
BatchedLinear<T>::BatchedLinear(std::size_t instances, std::size_t in, std::size_t out, bool with_bias)
    : weight(zeros<T, 2>({instances * out, in})),
      weight_grad(Matrix<T>::from_shape({instances * out, in})),
      bias(zeros<T, 2>({instances, with_bias ? out : std::size_t{0}})),
      bias_grad(Matrix<T>::from_shape({instances, with_bias ? out : std::size_t{0}})),
      instances_(instances) {
    if (instances < 1) throw Error("BatchedLinear: at least one instance");
}

template <class T>
void BatchedLinear<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {instances_, out_features(), in_features()}, weight.data(), weight_grad.data()});
    if (has_bias()) out.push_back({prefix + "bias", {instances_, out_features()}, bias.data(), bias_grad.data()});
}

template <class T>
const Matrix<T>& Linear<T>::forward(const Matrix<T>& X) {
    input_ = &X;
    linear_forward(*this, X, output_);
    return output_;
}

template <class T>
const Matrix<T>& Linear<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    linear_backward_params(*this, *input_, dY);
    if (!need_input_grad) {
        input_grad_ = Matrix<T>();
        return input_grad_;
    }
    linear_backward_input(*this, dY, input_grad_);
    return input_grad_;
}

template <class T>
void Linear<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    out.push_back({prefix + "weight", {weight.shape()[0], weight.shape()[1]}, weight.data(), weight_grad.data()});
    if (has_bias()) out.push_back({prefix + "bias", {bias.size()}, bias.data(), bias_grad.data()});
}

#define FFNLAB_INSTANTIATE(T, L)                                                                                 \
    template class L<T>;                                                                                         \
    template void linear_forward<T>(const L<T>&, const Matrix<T>&, Matrix<T>&, const Activation*, Matrix<T>*,   \
                                    RowHook<T>);                                                                 \
    template void linear_backward_params<T>(L<T>&, const Matrix<T>&, const Matrix<T>&);                          \
    template void linear_backward_input<T>(const L<T>&, const Matrix<T>&, Matrix<T>&, T, const Activation*,      \
                                           const Matrix<T>*, RowHook<T>);
FFNLAB_INSTANTIATE(float, Linear)
FFNLAB_INSTANTIATE(double, Linear)
FFNLAB_INSTANTIATE(float, BatchedLinear)
FFNLAB_INSTANTIATE(double, BatchedLinear)
#undef FFNLAB_INSTANTIATE

}  // namespace ffn::nn
