#include "nn/weights.h"

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
void load_weights(const std::string& path, Module<T>& module, const std::map<std::string, std::string>& names) {
    const io::SafetensorsFile file = io::read_safetensors(path);
    for (const auto& p : module.parameters()) {
        const auto mapped = names.find(p.name);
        const std::string stored = mapped == names.end() ? p.name : mapped->second;
        const io::TensorData* t = file.find(stored);
        if (!t) throw Error(path + ": no tensor '" + stored + "' (for parameter '" + p.name + "')");
        if (t->shape != p.shape)
            throw Error(path + ": tensor '" + stored + "' has shape " + shape_text(t->shape) + ", the model needs " +
                        shape_text(p.shape));
        const auto values = t->as_doubles();
        for (std::size_t i = 0; i < values.size(); ++i) p.value[i] = static_cast<T>(values[i]);
    }
}

template void save_weights<float>(const std::string&, Module<float>&, const std::map<std::string, std::string>&);
template void save_weights<double>(const std::string&, Module<double>&, const std::map<std::string, std::string>&);
template void load_weights<float>(const std::string&, Module<float>&, const std::map<std::string, std::string>&);
template void load_weights<double>(const std::string&, Module<double>&, const std::map<std::string, std::string>&);

}  // namespace ffn::nn
