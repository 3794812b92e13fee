#include "nn/activation.h"

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "core/names.h"
#include "gemm/gemm.h"
#include "nn/activation_loops.h"

namespace ffn::nn {

namespace {
const std::vector<std::string> kNames = {"relu", "tanh", "gelu", "gelu_tanh", "silu", "sigmoid", "identity"};

template <class T, class F>
void for_each(std::span<T> values, F f) {
    for (T& v : values) v = f(v);
}

// The loops of activation_loops.h: this file's build runs on any x86-64;
// activation_avx2.cpp's, with the same bits, wherever the gemm dispatch
// runs a family with AVX2 (so FFNLAB_ISA=ref exercises this one).
bool use_avx2_loops() { return std::strcmp(gemm::active_isa(), "ref") != 0; }
}  // namespace

namespace avx2 {
void smooth_forward(Activation a, std::span<float> v);
void smooth_forward(Activation a, std::span<double> v);
void smooth_forward_keeping_derivative(Activation a, std::span<float> v, float* d);
void smooth_forward_keeping_derivative(Activation a, std::span<double> v, double* d);
void smooth_backward(Activation a, std::span<const float> z, std::span<float> g);
void smooth_backward(Activation a, std::span<const double> z, std::span<double> g);
}  // namespace avx2

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
            loops::smooth_forward(a, std::span<T>(&value, 1));
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
            loops::smooth_backward(a, std::span<const T>(&x, 1), std::span<T>(&derivative, 1));
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
            if (use_avx2_loops()) avx2::smooth_forward(a, values);
            else loops::smooth_forward(a, values);
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
            if (use_avx2_loops()) avx2::smooth_forward_keeping_derivative(a, values, derivative.data());
            else loops::smooth_forward_keeping_derivative(a, values, derivative.data());
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
            if (use_avx2_loops()) avx2::smooth_backward(a, z, grad);
            else loops::smooth_backward(a, z, grad);
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
