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
    : weight(xt::zeros<T>({out_features, in_features})),
      weight_grad(Matrix<T>::from_shape({out_features, in_features})),
      bias(xt::zeros<T>({with_bias ? out_features : std::size_t{0}})),
      bias_grad(Vector<T>::from_shape({with_bias ? out_features : std::size_t{0}})) {}

template <class T>
void linear_forward(const Linear<T>& layer, const Matrix<T>& X, Matrix<T>& Y, const Activation* act, Matrix<T>* pre,
                    RowHook<T> then) {
    if (X.shape()[1] != layer.in_features())
        throw Error("Linear: input has " + std::to_string(X.shape()[1]) + " features, layer expects " +
                    std::to_string(layer.in_features()));
    const std::size_t tokens = X.shape()[0], out = layer.out_features();
    ensure_shape(Y, tokens, out);
    gemm::Epilogue<T> ep;
    ep.bias = layer.has_bias() ? layer.bias.data() : nullptr;
    hooks::KeptRows<T> ctx{};
    if (act && *act == Activation::relu && !pre) {
        ep.pointwise = gemm::Pointwise::relu;  // in the kernels' SIMD epilogue
    } else if (act && *act != Activation::identity) {
        if (pre) ensure_shape(*pre, tokens, out);
        ctx = {*act, pre ? pre->data() : nullptr, i64(out)};
        ep.rowwise = hooks::keep_input_and_activate_rows<T>;
        ep.context = &ctx;
    }
    if (then.fn) {
        if (ep.rowwise || ep.pointwise != gemm::Pointwise::none || pre)
            throw Error("linear_forward: a row hook with an activation or a kept pre-activation");
        ep.rowwise = then.fn;
        ep.context = then.context;
    }
    gemm::gemm<T>(Trans::no, Trans::yes, i64(tokens), i64(out), i64(layer.in_features()), T(1), X.data(),
                  i64(layer.in_features()), layer.weight.data(), i64(layer.in_features()), T(0), Y.data(), i64(out),
                  ep);
    if (pre && (!act || *act == Activation::identity)) *pre = Y;
}

template <class T>
void linear_backward_params(Linear<T>& layer, const Matrix<T>& X, const Matrix<T>& dY) {
    const std::size_t tokens = X.shape()[0], in = layer.in_features(), out = layer.out_features();
    // (out x tokens) . (tokens x in)
    gemm::gemm<T>(Trans::yes, Trans::no, i64(out), i64(in), i64(tokens), T(1), dY.data(), i64(out), X.data(), i64(in),
                  T(0), layer.weight_grad.data(), i64(in));
    if (layer.has_bias()) {
        // Column sums of dY as the product ones^T dY: vectorised, with the
        // same fixed summation order as every other product.
        thread_local std::vector<T> ones;
        if (ones.size() < tokens) ones.assign(tokens, T(1));
        gemm::gemm<T>(Trans::no, Trans::no, 1, i64(out), i64(tokens), T(1), ones.data(), i64(tokens), dY.data(),
                      i64(out), T(0), layer.bias_grad.data(), i64(out));
    }
}

template <class T>
void linear_backward_input(const Linear<T>& layer, const Matrix<T>& dY, Matrix<T>& dX, T beta, const Activation* act,
                           const Matrix<T>* z, RowHook<T> then) {
    const std::size_t tokens = dY.shape()[0], in = layer.in_features(), out = layer.out_features();
    if (beta == T(0)) ensure_shape(dX, tokens, in);
    gemm::Epilogue<T> ep;
    BackwardContext<T> ctx{};
    if (act && *act == Activation::relu) {
        // relu'(z) > 0 exactly where z > 0, and where relu(z) > 0: z may be either.
        ep.pointwise = gemm::Pointwise::relu_grad;
        ep.aux = z->data();
        ep.ld_aux = i64(in);
    } else if (act && *act != Activation::identity) {
        ctx = {*act, z->data(), i64(in)};
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
    gemm::gemm<T>(Trans::no, Trans::no, i64(tokens), i64(in), i64(out), T(1), dY.data(), i64(out),
                  layer.weight.data(), i64(in), beta, dX.data(), i64(in), ep);
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

#define FFNLAB_INSTANTIATE(T)                                                                                     \
    template class Linear<T>;                                                                                     \
    template void linear_forward<T>(const Linear<T>&, const Matrix<T>&, Matrix<T>&, const Activation*, Matrix<T>*, \
                                    RowHook<T>);                                                                 \
    template void linear_backward_params<T>(Linear<T>&, const Matrix<T>&, const Matrix<T>&);                     \
    template void linear_backward_input<T>(const Linear<T>&, const Matrix<T>&, Matrix<T>&, T, const Activation*,  \
                                           const Matrix<T>*, RowHook<T>);
FFNLAB_INSTANTIATE(float)
FFNLAB_INSTANTIATE(double)
#undef FFNLAB_INSTANTIATE

}  // namespace ffn::nn
