#include "nn/activation.h"

#include <algorithm>

#include "core/error.h"
#include "core/names.h"
#include "nn/kernels/activation_kernels.h"

namespace ffn::nn {

namespace kernels {
// The registry's row for the smooth loops, a build per family.
const PerIsa<SmoothLoopsFamily>& smooth_loops() {
    static const PerIsa<SmoothLoopsFamily> table{avx512_smooth_loops(), avx2_smooth_loops(), ref_smooth_loops()};
    return table;
}
}  // namespace kernels

namespace {
const std::vector<std::string> kNames = {"relu", "tanh", "gelu", "gelu_tanh", "silu", "sigmoid", "identity"};

template <class T, class F>
void for_each(std::span<T> values, F f) {
    for (T& v : values) v = f(v);
}

template <class T>
const kernels::SmoothLoops<T>& active_loops() {
    return kernels::smooth_loops_of<T>(active_isa());
}
}  // namespace

const std::vector<std::string>& activation_names() { return kNames; }

Activation parse_activation(std::string_view name) { return parse_name<Activation>(name, kNames, "activation"); }

std::string_view to_string(Activation a) { return name_of(a, kNames); }

bool derivative_from_output(Activation a) { return a == Activation::relu || a == Activation::identity; }

bool is_piecewise_linear(Activation a) { return a == Activation::relu || a == Activation::identity; }

template <class T>
T activate(Activation a, T x) {
    switch (a) {
        case Activation::relu: return x > T(0) ? x : T(0);
        case Activation::identity: return x;
        default: {
            T value = x;
            kernels::smooth_loops_of<T>(Isa::ref).forward(a, std::span<T>(&value, 1));
            return value;
        }
    }
}

template <class T>
T activate_derivative(Activation a, T x) {
    switch (a) {
        case Activation::relu: return x > T(0) ? T(1) : T(0);
        case Activation::identity: return T(1);
        default: {
            T derivative = T(1);
            kernels::smooth_loops_of<T>(Isa::ref).backward(a, std::span<const T>(&x, 1), std::span<T>(&derivative, 1));
            return derivative;
        }
    }
}

template <class T>
void activate_inplace(Activation a, std::span<T> values) {
    switch (a) {
        case Activation::relu: for_each(values, [](T x) { return x > T(0) ? x : T(0); }); return;
        case Activation::identity: return;
        default:
            active_loops<T>().forward(a, values);
            return;
    }
}

template <class T>
void activate_keeping_derivative(Activation a, std::span<T> values, std::span<T> derivative) {
    if (derivative.size() != values.size()) throw Error("activate_keeping_derivative: spans of different lengths");
    switch (a) {
        case Activation::relu:
            for (std::size_t i = 0; i < values.size(); ++i) {
                derivative[i] = values[i] > T(0) ? T(1) : T(0);
                values[i] = values[i] > T(0) ? values[i] : T(0);
            }
            return;
        case Activation::identity: std::fill(derivative.begin(), derivative.end(), T(1)); return;
        default:
            active_loops<T>().forward_keeping_derivative(a, values, derivative.data());
            return;
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
            active_loops<T>().backward(a, z, grad);
            return;
    }
}

template float activate<float>(Activation, float);
template double activate<double>(Activation, double);
template float activate_derivative<float>(Activation, float);
template double activate_derivative<double>(Activation, double);
template void activate_inplace<float>(Activation, std::span<float>);
template void activate_inplace<double>(Activation, std::span<double>);
template void activate_keeping_derivative<float>(Activation, std::span<float>, std::span<float>);
template void activate_keeping_derivative<double>(Activation, std::span<double>, std::span<double>);
template void multiply_by_derivative<float>(Activation, std::span<const float>, std::span<float>);
template void multiply_by_derivative<double>(Activation, std::span<const double>, std::span<double>);

}  // namespace ffn::nn
