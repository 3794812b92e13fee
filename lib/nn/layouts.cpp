#include "nn/layouts.h"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <set>
#include <span>

#include "core/error.h"
#include "core/memory.h"
#include "gemm/gemm.h"
#include "nn/weights.h"

namespace ffn::nn {

namespace {

// One row of the table: where a layout's MLP tensors sit and what they mean.
struct Layout {
    const char* name;
    std::vector<std::string> stacks;  // the block prefixes, the LM-head wrapper's first
    const char* gate;                 // nullptr: not gated
    const char* up;
    const char* down;
    bool transposed;       // weights stored [in, out] (GPT-2's Conv1D)
    bool biases_required;  // false: read where present (Llama's mlp_bias)
    Activation activation;
    const char* config_key;  // config.json's name for the activation
    // config.json's names for the width, the hidden width (absent or null
    // in GPT-2's: 4 x the width) and the number of blocks.
    const char* width_key;
    const char* hidden_key;
    const char* layers_key;
};

// What config.json says of the model must be what the weights are: a
// config of another model, or of quantized weights whose stored floats are
// not the model's (GPTQ's and AWQ's scales beside F32 tensors), is refused
// rather than read as this one.
void check_config_sizes(const io::Json& config, const std::string& folder, const Layout& l, const LayerSpec& spec, std::size_t blocks) {
    if (config.contains("quantization_config")) {
        const io::Json& q = config["quantization_config"];
        const std::string method = q.is_object() && q.contains("quant_method") && q["quant_method"].is_string()
                                       ? " (" + q["quant_method"].get<std::string>() + ")" : "";
        throw Error(fmt::format("{}/config.json: a quantization_config{}: ffn-lab reads a layer's weights as stored floats, and "
                                "quantized weights' are not the model's",
                                folder, method));
    }
    // A size, or the block's own where a config gives one per block.
    const auto size = [&](const char* key) -> std::optional<std::size_t> {
        if (!config.contains(key) || config[key].is_null()) return std::nullopt;
        const io::Json& v = config[key].is_array() && spec.layer < config[key].size() ? config[key][spec.layer] : config[key];
        if (!v.is_number_unsigned()) throw Error(fmt::format("{}/config.json: {} is {}, not a size", folder, key, config[key].dump()));
        return v.get<std::size_t>();
    };
    const auto width = size(l.width_key), blocks_said = size(l.layers_key), hidden_said = size(l.hidden_key);
    // GPT-2's n_inner, absent or null, is 4 x n_embd.
    const bool gpt2_default = !hidden_said && std::string(l.name) == "gpt2" && width;
    const auto hidden = gpt2_default ? std::optional(4 * *width) : hidden_said;
    const auto disagree = [&](const char* key, std::size_t said, const std::string& weights) {
        return Error(fmt::format("{}/config.json: {} is {}, but the weights {}; the config is not this checkpoint's", folder, key, said, weights));
    };
    if (width && *width != spec.d) throw disagree(l.width_key, *width, fmt::format("are {} wide", spec.d));
    if (hidden && *hidden != spec.hidden)
        throw disagree(gpt2_default ? l.width_key : l.hidden_key, gpt2_default ? *width : *hidden,
                       fmt::format("have {} hidden units{}", spec.hidden, gpt2_default ? " (GPT-2's default is 4 x n_embd)" : ""));
    if (blocks_said && *blocks_said < blocks) throw disagree(l.layers_key, *blocks_said, fmt::format("hold {} blocks", blocks));
}

const std::vector<Layout>& layouts() {
    static const std::vector<Layout> table = {
        {"gpt2", {"transformer.h.", "h."}, nullptr, "c_fc", "c_proj", true, true, Activation::gelu_tanh, "activation_function",
         "n_embd", "n_inner", "n_layer"},
        {"gpt_neox", {"gpt_neox.layers.", "layers."}, nullptr, "dense_h_to_4h", "dense_4h_to_h", false, true, Activation::gelu, "hidden_act",
         "hidden_size", "intermediate_size", "num_hidden_layers"},
        {"llama", {"model.layers.", "layers."}, "gate_proj", "up_proj", "down_proj", false, false, Activation::silu, "hidden_act",
         "hidden_size", "intermediate_size", "num_hidden_layers"},
    };
    return table;
}

// Hugging Face's activation names (transformers' ACT2FN) that ffn-lab
// computes: gelu_new, gelu_pytorch_tanh and gelu_fast are one formula, the
// tanh approximation, in three spellings.
const std::map<std::string, Activation>& hf_activations() {
    static const std::map<std::string, Activation> names = {
        {"gelu", Activation::gelu},           {"gelu_new", Activation::gelu_tanh}, {"gelu_pytorch_tanh", Activation::gelu_tanh},
        {"gelu_fast", Activation::gelu_tanh}, {"relu", Activation::relu},          {"silu", Activation::silu},
        {"swish", Activation::silu},          {"tanh", Activation::tanh},          {"sigmoid", Activation::sigmoid}};
    return names;
}

// The layer indices under `stack` whose up weight is named as `layout` names
// it (".weight", or GPTQ/AWQ's ".qweight" when `quantised`).
std::set<std::size_t> layers_under(const std::vector<std::string>& names, const std::string& stack, const Layout& layout,
                                   const char* suffix) {
    std::set<std::size_t> found;
    const std::string tail = std::string(".mlp.") + layout.up + suffix;
    for (const auto& n : names) {
        if (n.size() <= stack.size() + tail.size() || n.compare(0, stack.size(), stack) != 0 ||
            n.compare(n.size() - tail.size(), tail.size(), tail) != 0)
            continue;
        const char* first = n.data() + stack.size();
        const char* last = n.data() + n.size() - tail.size();
        std::size_t index = 0;
        const auto [end, ec] = std::from_chars(first, last, index);
        if (ec == std::errc() && end == last && first != last && (*first != '0' || last - first == 1)) found.insert(index);
    }
    return found;
}

std::string ranges_text(const std::set<std::size_t>& s) {
    std::vector<std::string> parts;
    for (auto it = s.begin(); it != s.end();) {
        std::size_t lo = *it, hi = lo;
        for (++it; it != s.end() && *it == hi + 1; ++it) hi = *it;
        parts.push_back(lo == hi ? std::to_string(lo) : fmt::format("{}-{}", lo, hi));
    }
    return fmt::format("{}", fmt::join(parts, ", "));
}

std::string shape_text(const std::vector<std::size_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

struct Match {
    const Layout* layout;
    std::string stack;
    std::set<std::size_t> layers;
};

const Layout& layout_named(const std::string& name) {
    for (const auto& l : layouts())
        if (name == l.name) return l;
    throw Error(fmt::format("key 'layout': '{}' is not a layout of a checkpoint's layer (known: {})", name, fmt::join(layout_names(), ", ")));
}

std::string tensor_name(const Match& m, std::size_t layer, const char* role, const char* what) {
    return fmt::format("{}{}.mlp.{}.{}", m.stack, layer, role, what);
}

}  // namespace

const std::vector<std::string>& layout_names() {
    static const std::vector<std::string> names = {"gpt2", "gpt_neox", "llama", "sequential"};
    return names;
}

LayerSpec find_layer(const io::Checkpoint& checkpoint, std::optional<std::size_t> layer, const std::optional<std::string>& layout) {
    const std::string& path = checkpoint.path();
    const std::vector<std::string> names = checkpoint.names();
    std::vector<Match> matches;
    for (const auto& l : layouts()) {
        if (layout && *layout != l.name) continue;
        for (const auto& stack : l.stacks) {
            auto found = layers_under(names, stack, l, ".weight");
            if (!found.empty()) matches.push_back({&l, stack, std::move(found)});
        }
    }
    if (matches.empty()) {
        for (const auto& l : layouts())
            for (const auto& stack : l.stacks)
                if (!layers_under(names, stack, l, ".qweight").empty())
                    throw Error(fmt::format("{}: a quantised checkpoint ({}N.mlp.{}.qweight, as GPTQ and AWQ write); ffn-lab reads F32, F64, F16 and BF16 weights (dequantise it first)",
                                            path, stack, l.up));
        if (layout) {
            const Layout& l = layout_named(*layout);
            throw Error(fmt::format("{}: layout '{}' names no tensor here (it looks for {}N.mlp.{}.weight)", path, *layout, l.stacks.front(), l.up));
        }
        throw Error(fmt::format("{}: no MLP layer of a known layout (looked for transformer.h.N.mlp.c_fc, gpt_neox.layers.N.mlp.dense_h_to_4h, "
                                "model.layers.N.mlp.up_proj, each with or without its first prefix; ffn-lab's own and nn.Sequential files "
                                "take layout \"sequential\")",
                                path));
    }
    if (matches.size() > 1) {
        std::vector<std::string> found;
        for (const auto& m : matches) found.push_back(fmt::format("{} ({}N.mlp)", m.layout->name, m.stack));
        throw Error(fmt::format("{}: the tensor names fit more than one layout: {}; name one with the key 'layout'", path, fmt::join(found, ", ")));
    }
    const Match& m = matches.front();
    const Layout& l = *m.layout;
    const std::size_t count = *m.layers.rbegin() + 1;
    if (!layer) {
        if (m.layers.size() > 1)
            throw Error(fmt::format("key 'layer': {} holds {} MLP layers ({}); name one", path, m.layers.size(), ranges_text(m.layers)));
        layer = *m.layers.begin();
    }
    if (!m.layers.count(*layer))
        throw Error(fmt::format("key 'layer': layer {}: the checkpoint has layers {}", *layer, ranges_text(m.layers)));

    LayerSpec spec{.layout = l.name, .layer = *layer, .layers = count, .activation = l.activation, .gated = l.gate != nullptr};
    spec.source = fmt::format("{}, layer {} ({})", path, *layer, l.name);
    // Shapes as nn.Linear holds them, [out, in]: Conv1D's are read swapped.
    const auto linear_shape = [&](const char* role) {
        const std::string name = tensor_name(m, *layer, role, "weight");
        if (!checkpoint.has(name)) throw Error(fmt::format("{}: layer {} has no tensor '{}'", path, *layer, name));
        std::vector<std::size_t> s = checkpoint.entry(name).shape;
        if (s.size() != 2) throw Error(fmt::format("{}: tensor '{}' has shape {}, not a matrix", path, name, shape_text(s)));
        if (l.transposed) std::swap(s[0], s[1]);
        return s;
    };
    const auto up = linear_shape(l.up), down = linear_shape(l.down);
    const auto gate = l.gate ? linear_shape(l.gate) : up;
    spec.hidden = up[0];
    spec.d = up[1];
    if (gate != up || down[0] != spec.d || down[1] != spec.hidden || spec.d == 0 || spec.hidden == 0) {
        const auto stored = [&](const char* role) { return fmt::format("{} {}", role, shape_text(checkpoint.entry(tensor_name(m, *layer, role, "weight")).shape)); };
        throw Error(fmt::format("{}: layer {}'s shapes disagree: {}{}, {}{}", path, *layer, l.gate ? stored(l.gate) + ", " : "", stored(l.up),
                                stored(l.down), l.transposed ? " (stored [in, out], as Conv1D)" : ""));
    }
    // Biases: all or none.
    std::vector<const char*> roles = {l.up, l.down};
    if (l.gate) roles.insert(roles.begin(), l.gate);
    std::size_t with_bias = 0;
    for (const char* role : roles) with_bias += checkpoint.has(tensor_name(m, *layer, role, "bias"));
    if (l.biases_required && with_bias != roles.size())
        throw Error(fmt::format("{}: layer {} lacks a bias of {} (a {} layer has one on each projection)", path, *layer,
                                fmt::join(roles, "/"), l.name));
    if (with_bias != 0 && with_bias != roles.size())
        throw Error(fmt::format("{}: layer {} has biases on some of {} but not all", path, *layer, fmt::join(roles, "/")));
    spec.biases = with_bias == roles.size();
    for (const char* role : roles) {
        const auto expect_bias = [&](const std::string& name, std::size_t n) {
            const auto& s = checkpoint.entry(name).shape;
            if (s != std::vector<std::size_t>{n})
                throw Error(fmt::format("{}: tensor '{}' has shape {}, the layer needs [{}]", path, name, shape_text(s), n));
        };
        if (spec.biases) expect_bias(tensor_name(m, *layer, role, "bias"), role == l.down ? spec.d : spec.hidden);
    }
    if (const auto& config = checkpoint.config(); config && config->contains(l.config_key)) {
        const auto& value = (*config)[l.config_key];
        const auto known = value.is_string() ? hf_activations().find(value.get<std::string>()) : hf_activations().end();
        if (known == hf_activations().end()) {
            std::vector<std::string> have;
            for (const auto& [name, a] : hf_activations()) have.push_back(name);
            throw Error(fmt::format("{}/config.json: {} {} is not an activation ffn-lab computes (it has {})",
                                    checkpoint.folder(), l.config_key, value.dump(), fmt::join(have, ", ")));
        }
        spec.activation = known->second;
    }
    if (const auto& config = checkpoint.config()) check_config_sizes(*config, checkpoint.folder(), l, spec, count);
    return spec;
}

std::vector<std::pair<std::string, std::string>> layer_tensor_names(const io::Checkpoint& checkpoint, const LayerSpec& spec) {
    const Layout& l = layout_named(spec.layout);
    for (const auto& stack : l.stacks) {
        const Match m{&l, stack, {}};
        if (!checkpoint.has(tensor_name(m, spec.layer, l.up, "weight"))) continue;
        std::vector<std::pair<std::string, std::string>> out;
        const auto add = [&](const char* role, const char* ours) {
            out.emplace_back(std::string(ours) + ".weight", tensor_name(m, spec.layer, role, "weight"));
            if (spec.biases) out.emplace_back(std::string(ours) + ".bias", tensor_name(m, spec.layer, role, "bias"));
        };
        if (l.gate) add(l.gate, "gate");
        add(l.up, "up");
        add(l.down, "down");
        return out;
    }
    throw Error(fmt::format("{}: layer {} of layout {} is not in the checkpoint", checkpoint.path(), spec.layer, spec.layout));
}

template <class T>
LoadedLayer<T> load_layer(const io::Checkpoint& checkpoint, const LayerSpec& spec) {
    // The module built at its smallest, then given layers of the real
    // shapes left unfilled: every value is read from the checkpoint below,
    // and filling 500 MB with zeros first (on one thread) had cost more
    // than reading them.
    const auto unfilled = [&](std::size_t in, std::size_t out_features) {
        Linear<T> l;
        l.weight = Matrix<T>::from_shape({out_features, in});
        prefer_huge_pages(l.weight.data(), l.weight.size() * sizeof(T));
        l.weight_grad = Matrix<T>::from_shape({out_features, in});
        l.bias = Vector<T>::from_shape({spec.biases ? out_features : std::size_t{0}});
        l.bias_grad = Vector<T>::from_shape({spec.biases ? out_features : std::size_t{0}});
        return l;
    };
    LoadedLayer<T> out{spec, nullptr, nullptr};
    if (spec.gated) {
        out.gated = std::make_unique<GatedMLP<T>>(1, 1, spec.activation, spec.biases);
        out.gated->gate = unfilled(spec.d, spec.hidden);
        out.gated->up = unfilled(spec.d, spec.hidden);
        out.gated->down = unfilled(spec.hidden, spec.d);
    } else {
        out.plain = std::make_unique<MLP<T>>(std::vector<std::size_t>{1, 1, 1}, spec.activation, spec.biases);
        out.plain->layers[0] = unfilled(spec.d, spec.hidden);
        out.plain->layers[1] = unfilled(spec.hidden, spec.d);
    }
    const bool transposed = layout_named(spec.layout).transposed;
    std::map<std::string, ParamRef<T>> params;
    for (auto& p : out.module().parameters()) params.emplace(p.name, p);
    // Each tensor in parts of about 16 Mi values, the parts spread over the
    // threads gemm uses (converting and first touching a 7B model's layer is
    // the cost, not reading it); each part piece by piece into the
    // parameter, so a layer costs its own memory and little more. Conv1D's
    // [in, out] lands transposed.
    struct Part {
        std::string stored;
        const ParamRef<T>* p;
        std::size_t begin, end;
    };
    std::vector<Part> parts;
    constexpr std::size_t kPart = std::size_t{1} << 24;
    for (const auto& [ours, stored] : layer_tensor_names(checkpoint, spec)) {
        (void)checkpoint.entry(stored);  // headers read here, on one thread
        const ParamRef<T>& p = params.at(ours);
        for (std::size_t begin = 0; begin < p.size(); begin += kPart) parts.push_back({stored, &p, begin, std::min(p.size(), begin + kPart)});
    }
    gemm::parallel_ranges(parts.size(), 2, [&](std::size_t first_part, std::size_t last_part) {
        std::vector<T> piece;
        for (std::size_t k = first_part; k < last_part; ++k) {
            const Part& part = parts[k];
            const ParamRef<T>& p = *part.p;
            const std::string where = fmt::format("{} ({}): tensor '{}'", checkpoint.path(), checkpoint.shard_name(part.stored), part.stored);
            const std::size_t rows = p.shape[0], cols = p.shape.size() == 2 ? p.shape[1] : 1;
            checkpoint.read_values(
                part.stored,
                [&](std::size_t first, std::span<const double> values) {
                    if (!transposed || p.shape.size() != 2) return copy_finite(values, p.value + first, where, first);
                    piece.resize(values.size());
                    copy_finite(values, piece.data(), where, first);
                    for (std::size_t v = 0; v < values.size(); ++v) {
                        const std::size_t i = (first + v) / rows, j = (first + v) % rows;  // stored [cols = in][rows = out]
                        p.value[j * cols + i] = piece[v];
                    }
                },
                part.begin, part.end);
        }
    });
    return out;
}

template <class T>
Matrix<T> LoadedLayer<T>::pre_activation(const Matrix<T>& X) const {
    return nn::apply(plain ? plain->layers.front() : gated->gate, X);
}

template <class T>
Matrix<T> LoadedLayer<T>::hidden(const Matrix<T>& X) const {
    // The forward's hidden values without its down projection: the same
    // products and activation loops, so the same bits (tests/nn/test_layouts.cpp).
    Matrix<T> H = pre_activation(X);
    activate_inplace(plain ? plain->activation : gated->activation, std::span<T>(H.data(), H.size()));
    if (gated) {
        const Matrix<T> U = nn::apply(gated->up, X);
        for (std::size_t i = 0; i < H.size(); ++i) H.data()[i] *= U.data()[i];
    }
    return H;
}

template struct LoadedLayer<float>;
template struct LoadedLayer<double>;
template LoadedLayer<float> load_layer<float>(const io::Checkpoint&, const LayerSpec&);
template LoadedLayer<double> load_layer<double>(const io::Checkpoint&, const LayerSpec&);

}  // namespace ffn::nn
