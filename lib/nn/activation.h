#pragma once
// Elementwise activations, named as configs name them.
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

}  // namespace ffn::nn
