#pragma once
// Elementwise activations, named as configs name them, each with its
// derivative. The array forms take the switch out of the inner loop.
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ffn::nn {

enum class Activation { relu, tanh, gelu, gelu_tanh, silu, sigmoid, identity };

// All names, in a fixed order, for schemas and error messages.
const std::vector<std::string>& activation_names();
// Throws ffn::Error naming the known activations when `name` is not one.
Activation parse_activation(std::string_view name);
std::string_view to_string(Activation a);

template <class T>
T activate(Activation a, T x);

// d act / dx at x. ReLU's derivative at 0 is 0, as in PyTorch, so it equals
// the indicator 1[x > 0] of the documents' Jacobians.
template <class T>
T activate_derivative(Activation a, T x);

template <class T>
void activate_inplace(Activation a, std::span<T> values);

// values[i] = act(values[i]) and derivative[i] = act'(values[i]) before,
// each with the bits of activate_inplace and activate_derivative, in one
// pass: a smooth activation's exp or erfc is computed once for both. For a
// layer whose backward pass would otherwise compute the formula again.
template <class T>
void activate_keeping_derivative(Activation a, std::span<T> values, std::span<T> derivative);

// grad[i] *= act'(z[i]). For relu, z may be the activation's output instead
// of its input (both are > 0 at the same places), which saves keeping z.
template <class T>
void multiply_by_derivative(Activation a, std::span<const T> z, std::span<T> grad);

// True when backward needs only the activation's output (relu, identity),
// so a layer need not keep the pre-activation.
bool derivative_from_output(Activation a);

// True for relu and identity: the activations whose networks are piecewise
// linear in their input, so that kinks and pieces can be counted.
bool is_piecewise_linear(Activation a);

}  // namespace ffn::nn
