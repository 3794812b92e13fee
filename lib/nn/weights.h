#pragma once
// A module's parameters to and from safetensors files, by name. Loading
// checks that every expected tensor is there with the right shape; a float64
// file loads into a float32 model and the reverse (rounded to nearest).
#include <map>
#include <span>
#include <string>
#include <vector>

#include "nn/module.h"

namespace ffn::nn {

template <class T>
void save_weights(const std::string& path, Module<T>& module, const std::map<std::string, std::string>& metadata = {});

// Each parameter is read from the tensor `names` maps it to (parameter name
// -> tensor name in the file, e.g. "up.weight" -> "0.weight"); a parameter
// without an entry from the tensor of its own name (what save_weights
// writes), else from the one `aliases` gives it (e.g. PyTorch's
// nn.Sequential numbering). Throws ffn::Error naming the file and tensor on
// any mismatch.
template <class T>
void load_weights(const std::string& path, Module<T>& module, const std::map<std::string, std::string>& names = {},
                  const std::map<std::string, std::string>& aliases = {});

// Copies a tensor's values (widened to double) into `out`, rounded to T;
// throws ffn::Error naming `where` and the element when one is NaN,
// infinite or beyond T's range.
// `first` is the index of values[0] in the tensor, for the message.
template <class T>
void copy_finite(std::span<const double> values, T* out, const std::string& where, std::size_t first = 0);

}  // namespace ffn::nn
