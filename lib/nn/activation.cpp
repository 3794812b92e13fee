#include "nn/activation.h"

#include <cmath>
#include <numbers>

#include "core/error.h"

namespace ffn::nn {

namespace {
const std::vector<std::string> kNames = {"relu",    "tanh",    "gelu",    "gelu_tanh",
                                         "silu",    "sigmoid", "identity"};
// sqrt(2/pi) and the cubic coefficient of GELU's tanh approximation
// (Hendrycks and Gimpel 2016), as PyTorch's approximate="tanh".
constexpr double kGeluTanhScale = 0.7978845608028654;
constexpr double kGeluTanhCubic = 0.044715;
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

template <class T>
T activate(Activation a, T x) {
    switch (a) {
        case Activation::relu: return x > T(0) ? x : T(0);
        case Activation::tanh: return std::tanh(x);
        case Activation::gelu: return T(0.5) * x * (T(1) + std::erf(x * T(std::numbers::sqrt2 / 2)));
        case Activation::gelu_tanh:
            return T(0.5) * x *
                   (T(1) + std::tanh(T(kGeluTanhScale) * (x + T(kGeluTanhCubic) * x * x * x)));
        case Activation::silu: return x / (T(1) + std::exp(-x));
        case Activation::sigmoid: return T(1) / (T(1) + std::exp(-x));
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
            const T cdf = T(0.5) * (T(1) + std::erf(x * T(std::numbers::sqrt2 / 2)));
            const T pdf = std::exp(T(-0.5) * x * x) * T(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
            return cdf + x * pdf;
        }
        case Activation::gelu_tanh: {
            const T inner = T(kGeluTanhScale) * (x + T(kGeluTanhCubic) * x * x * x);
            const T t = std::tanh(inner);
            const T d_inner = T(kGeluTanhScale) * (T(1) + T(3 * kGeluTanhCubic) * x * x);
            return T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * d_inner;
        }
        case Activation::silu: {
            const T s = T(1) / (T(1) + std::exp(-x));
            return s * (T(1) + x * (T(1) - s));
        }
        case Activation::sigmoid: {
            const T s = T(1) / (T(1) + std::exp(-x));
            return s * (T(1) - s);
        }
        case Activation::identity: return T(1);
    }
    return T(1);
}

template <class T>
void activate_inplace(Activation a, std::span<T> values) {
    if (a == Activation::identity) return;
    for (T& v : values) v = activate(a, v);
}

template float activate<float>(Activation, float);
template double activate<double>(Activation, double);
template float activate_derivative<float>(Activation, float);
template double activate_derivative<double>(Activation, double);
template void activate_inplace<float>(Activation, std::span<float>);
template void activate_inplace<double>(Activation, std::span<double>);

}  // namespace ffn::nn
