#include "nn/activation.h"

#include <cmath>
#include <numbers>

#include "core/error.h"

namespace ffn::nn {

namespace {
const std::vector<std::string> kNames = {"relu", "tanh", "gelu", "gelu_tanh", "silu", "sigmoid", "identity"};
// sqrt(2/pi) and the cubic coefficient of GELU's tanh approximation
// (Hendrycks and Gimpel 2016), as PyTorch's approximate="tanh".
constexpr double kGeluTanhScale = 0.7978845608028654;
constexpr double kGeluTanhCubic = 0.044715;
constexpr double kInvSqrt2 = std::numbers::sqrt2 / 2;
constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi), the normal density at 0

template <class T>
T sigmoid(T x) {
    return T(1) / (T(1) + std::exp(-x));
}

template <class T, class F>
void for_each(std::span<T> values, F f) {
    for (T& v : values) v = f(v);
}
}  // namespace

const std::vector<std::string>& activation_names() { return kNames; }

Activation parse_activation(std::string_view name) {
    for (std::size_t i = 0; i < kNames.size(); ++i)
        if (kNames[i] == name) return static_cast<Activation>(i);
    std::string known;
    for (const auto& n : kNames) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown activation '" + std::string(name) + "' (expected one of: " + known + ")");
}

std::string_view to_string(Activation a) { return kNames.at(static_cast<std::size_t>(a)); }

bool derivative_from_output(Activation a) { return a == Activation::relu || a == Activation::identity; }

template <class T>
T activate(Activation a, T x) {
    switch (a) {
        case Activation::relu: return x > T(0) ? x : T(0);
        case Activation::tanh: return std::tanh(x);
        case Activation::gelu: return T(0.5) * x * (T(1) + std::erf(x * T(kInvSqrt2)));
        case Activation::gelu_tanh:
            return T(0.5) * x * (T(1) + std::tanh(T(kGeluTanhScale) * (x + T(kGeluTanhCubic) * x * x * x)));
        case Activation::silu: return x * sigmoid(x);
        case Activation::sigmoid: return sigmoid(x);
        case Activation::identity: return x;
    }
    return x;
}

template <class T>
T activate_derivative(Activation a, T x) {
    switch (a) {
        case Activation::relu: return x > T(0) ? T(1) : T(0);
        case Activation::tanh: {
            const T t = std::tanh(x);
            return T(1) - t * t;
        }
        case Activation::gelu: {
            const T cdf = T(0.5) * (T(1) + std::erf(x * T(kInvSqrt2)));
            return cdf + x * std::exp(T(-0.5) * x * x) * T(kInvSqrt2Pi);
        }
        case Activation::gelu_tanh: {
            const T t = std::tanh(T(kGeluTanhScale) * (x + T(kGeluTanhCubic) * x * x * x));
            const T d_inner = T(kGeluTanhScale) * (T(1) + T(3 * kGeluTanhCubic) * x * x);
            return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * d_inner;
        }
        case Activation::silu: {
            const T s = sigmoid(x);
            return s * (T(1) + x * (T(1) - s));
        }
        case Activation::sigmoid: {
            const T s = sigmoid(x);
            return s * (T(1) - s);
        }
        case Activation::identity: return T(1);
    }
    return T(1);
}

template <class T>
void activate_inplace(Activation a, std::span<T> values) {
    switch (a) {
        case Activation::relu: for_each(values, [](T x) { return x > T(0) ? x : T(0); }); return;
        case Activation::identity: return;
        default: for_each(values, [a](T x) { return activate(a, x); }); return;
    }
}

template <class T>
void multiply_by_derivative(Activation a, std::span<const T> z, std::span<T> grad) {
    switch (a) {
        case Activation::relu:
            for (std::size_t i = 0; i < grad.size(); ++i) grad[i] = z[i] > T(0) ? grad[i] : T(0);
            return;
        case Activation::identity: return;
        default:
            for (std::size_t i = 0; i < grad.size(); ++i) grad[i] *= activate_derivative(a, z[i]);
            return;
    }
}

template float activate<float>(Activation, float);
template double activate<double>(Activation, double);
template float activate_derivative<float>(Activation, float);
template double activate_derivative<double>(Activation, double);
template void activate_inplace<float>(Activation, std::span<float>);
template void activate_inplace<double>(Activation, std::span<double>);
template void multiply_by_derivative<float>(Activation, std::span<const float>, std::span<float>);
template void multiply_by_derivative<double>(Activation, std::span<const double>, std::span<double>);

}  // namespace ffn::nn
