#include "nn/weights.h"

#include <cmath>
#include <limits>
#include <set>

#include "core/error.h"
#include "io/safetensors.h"

namespace ffn::nn {

namespace {
std::string shape_text(const std::vector<std::size_t>& shape) {
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}
}  // namespace

template <class T>
void save_weights(const std::string& path, Module<T>& module, const std::map<std::string, std::string>& metadata) {
    io::SafetensorsFile file;
    file.metadata = metadata;
    for (const auto& p : module.parameters()) file.tensors.push_back(io::make_tensor<T>(p.name, p.shape, p.value));
    io::write_safetensors(path, file);
}

template <class T>
void load_weights(const std::string& path, Module<T>& module, const std::map<std::string, std::string>& names,
                  const std::map<std::string, std::string>& aliases) {
    // A name the model has no parameter of is a misspelling: named as one,
    // not as the tensor the parameter's own name then misses.
    std::set<std::string> known;
    std::string parameters;
    for (const auto& p : module.parameters()) {
        known.insert(p.name);
        parameters += (parameters.empty() ? "" : ", ") + p.name;
    }
    for (const auto& mapped : names)
        if (!known.count(mapped.first))
            throw Error("key 'names': the model has no parameter '" + mapped.first + "' (its parameters: " + parameters + ")");
    const io::SafetensorsFile file = io::read_safetensors(path);
    for (const auto& p : module.parameters()) {
        std::string stored = p.name;
        if (const auto mapped = names.find(p.name); mapped != names.end()) stored = mapped->second;
        else if (const auto alias = aliases.find(p.name); !file.find(p.name) && alias != aliases.end() && file.find(alias->second))
            stored = alias->second;
        const io::TensorData* t = file.find(stored);
        if (!t) {
            const auto alias = aliases.find(p.name);
            throw Error(path + ": no tensor '" + stored + "'" +
                        (alias != aliases.end() && !names.count(p.name) ? " or '" + alias->second + "'" : "") +
                        " (for parameter '" + p.name + "'; the config's \"names\" maps a parameter to a tensor)");
        }
        if (t->shape != p.shape)
            throw Error(path + ": tensor '" + stored + "' has shape " + shape_text(t->shape) + ", the model needs " +
                        shape_text(p.shape));
        copy_finite(t->as_doubles(), p.value, path + ": tensor '" + stored + "'");
    }
}

template <class T>
void copy_finite(std::span<const double> values, T* out, const std::string& where, std::size_t first) {
    // A NaN or infinite weight would be analysed as if it were a model
    // (a residual of 0, an RMSE...); a float64 value beyond float32's
    // range would become one silently.
    for (std::size_t i = 0; i < values.size(); ++i) {
        const double v = values[i];
        if (!std::isfinite(v) || std::fabs(v) > static_cast<double>(std::numeric_limits<T>::max()))
            throw Error(where + " element " + std::to_string(first + i) + " is " +
                        (std::isnan(v) ? "NaN" : std::isinf(v) ? "infinite" : "beyond the model's float32 range (" + std::to_string(v) + ")") +
                        ": weights must be finite numbers");
        out[i] = static_cast<T>(v);
    }
}

template void save_weights<float>(const std::string&, Module<float>&, const std::map<std::string, std::string>&);
template void save_weights<double>(const std::string&, Module<double>&, const std::map<std::string, std::string>&);
template void load_weights<float>(const std::string&, Module<float>&, const std::map<std::string, std::string>&,
                                  const std::map<std::string, std::string>&);
template void copy_finite<float>(std::span<const double>, float*, const std::string&, std::size_t);
template void copy_finite<double>(std::span<const double>, double*, const std::string&, std::size_t);
template void load_weights<double>(const std::string&, Module<double>&, const std::map<std::string, std::string>&,
                                   const std::map<std::string, std::string>&);

}  // namespace ffn::nn
