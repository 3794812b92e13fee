#pragma once
// A module's parameters to and from safetensors files, by name. Loading
// checks that every expected tensor is there with the right shape; a float64
// file loads into a float32 model and the reverse (rounded to nearest).
#include <map>
#include <string>

#include "nn/module.h"

namespace ffn::nn {

template <class T>
void save_weights(const std::string& path, Module<T>& module, const std::map<std::string, std::string>& metadata = {});

// `names` maps the module's parameter names to the file's (e.g. "up.weight"
// -> "0.weight" for a PyTorch nn.Sequential); unmapped names are used as they
// are. Throws ffn::Error naming the file and tensor on any mismatch.
template <class T>
void load_weights(const std::string& path, Module<T>& module, const std::map<std::string, std::string>& names = {});

}  // namespace ffn::nn
