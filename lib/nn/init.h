#pragma once
// Initialisers, by name. Weights (2-D, out x in) follow the scheme; biases
// follow PyTorch's nn.Linear under "torch_default" and are zero otherwise;
// normalisation parameters keep their ones and zeros. Values are drawn in
// parameter order, row-major, from the given stream, so a (seed, purpose)
// pair fixes every number.
//
//   torch_default   W ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)) (kaiming_uniform,
//                   a = sqrt(5)), b ~ the same bound
//   xavier_uniform  W ~ U(-a, a), a = sqrt(6 / (fan_in + fan_out))
//   xavier_normal   W ~ N(0, 2 / (fan_in + fan_out))
//   kaiming_normal  W ~ N(0, 2 / fan_in)            (ReLU gain, fan_in mode)
//   normal          W ~ N(0, std^2)
//   uniform         W ~ U(lo, hi)
//   zeros, constant W = 0, W = value
#include <string>
#include <string_view>
#include <vector>

#include "core/rng.h"
#include "nn/module.h"

namespace ffn::nn {

enum class InitScheme { torch_default, xavier_uniform, xavier_normal, kaiming_normal, normal, uniform, zeros, constant };

const std::vector<std::string>& init_scheme_names();
// Throws ffn::Error naming the schemes when `name` is not one.
InitScheme parse_init_scheme(std::string_view name);

struct InitSpec {
    InitScheme scheme = InitScheme::torch_default;
    double std = 0.02;
    double lo = -0.1, hi = 0.1;
    double value = 0.0;
};

template <class T>
void initialize(Module<T>& module, const InitSpec& spec, Rng& rng);

}  // namespace ffn::nn
