#pragma once
// The keys of the kinds that inspect one MLP layer of a real checkpoint
// (firing_fraction, unit_contrast): which layer of `weights`, in which
// layout, and the inputs that feed it, read from a safetensors file:
//   inputs  [N, d]  the residual-stream vectors entering the layer
//   group   [N]     optional: 1 for group a, 0 for group b
//   inputs_a, inputs_b [N_a, d], [N_b, d]: the two groups as two tensors
//   readout [d]     optional: the readout q whose change an intervention reports
// (experiments/unit_contrast/capture_inputs.py writes one with PyTorch).
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiments/support/run.h"
#include "io/checkpoint.h"
#include "nn/layouts.h"

namespace ffn::experiments {

inline void add_layer_keys(runner::Schema& schema) {
    using runner::KeyType;
    std::vector<std::string> layouts = {""};
    for (const auto& l : nn::layout_names()) layouts.push_back(l);
    schema.add({.path = "layer", .type = KeyType::integer, .default_value = -1, .min = -1.0, .max = 1e6,
                .help = "the block whose MLP `weights` holds, for a checkpoint of several; -1: its only one"});
    schema.add({.path = "layout", .type = KeyType::string, .default_value = "", .choices = layouts,
                .help = "how `weights` names its tensors: \"\" finds out from the names; gpt2, gpt_neox, llama, or sequential (ffn-lab's own and nn.Sequential files)"});
    schema.add({.path = "inputs", .type = KeyType::string, .default_value = "",
                .help = "a safetensors file of the layer's inputs: `inputs` [N, d] with `group` [N] of 0/1, or `inputs_a` and `inputs_b`; optionally `readout` [d]"});
}

// A checkpoint's layer, found from its header (and index) alone.
struct FoundLayer {
    io::Checkpoint checkpoint;
    nn::LayerSpec spec;
};

// The layer `weights` names when it is a Hugging Face checkpoint's; nothing
// for a run with no weights or with ffn-lab's own or nn.Sequential's names
// (read as today, into a d-m-d MLP).
inline std::optional<FoundLayer> checkpoint_layer(const runner::Run& run) {
    const std::string weights = run.string("weights"), layout = run.string("layout");
    const std::int64_t layer = run.integer("layer");
    if (weights.empty() || layout == "sequential") {
        if (layer >= 0) throw Error("key 'layer': a layer is read from a checkpoint's 'weights' of layout gpt2, gpt_neox or llama");
        return std::nullopt;
    }
    io::Checkpoint checkpoint = io::Checkpoint::open(weights);
    if (layout.empty() && layer < 0 && (checkpoint.has("up.weight") || checkpoint.has("0.weight"))) return std::nullopt;
    nn::LayerSpec spec = nn::find_layer(checkpoint, layer >= 0 ? std::optional<std::size_t>(static_cast<std::size_t>(layer)) : std::nullopt,
                                        layout.empty() ? std::nullopt : std::optional<std::string>(layout));
    return FoundLayer{std::move(checkpoint), std::move(spec)};
}

// Two groups of inputs, rows of d values.
struct GivenGroups {
    std::vector<std::vector<double>> a, b;
    std::vector<double> readout;  // from the file; empty if it has none
};

namespace detail {

inline std::vector<std::vector<double>> rows_of(const io::SafetensorsHeader& header, const std::string& name, std::size_t d,
                                                bool float64) {
    const io::TensorEntry* e = header.find(name);
    if (!e) throw Error(fmt::format("{}: no tensor '{}'", header.path, name));
    if (e->shape.size() != 2 || e->shape[1] != d)
        throw Error(fmt::format("{}: tensor '{}' has shape [{}], the layer reads rows of d = {}", header.path, name,
                                fmt::join(e->shape, ", "), d));
    const auto values = io::read_tensor(header, *e).as_doubles();
    // A value the run's dtype cannot hold would turn every contrast and
    // ablation of the run into NaN.
    const double largest = float64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
    std::vector<std::vector<double>> rows(e->shape[0], std::vector<double>(d));
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!(std::abs(values[i]) <= largest))
            throw Error(fmt::format("{}: tensor '{}' row {} holds {}, not a finite {} value", header.path, name, i / d,
                                    values[i], float64 ? "float64" : "float32"));
        rows[i / d][i % d] = values[i];
    }
    return rows;
}

}  // namespace detail

// The groups of a run with groups "given": from its `inputs` file, else
// from the config's inputs_a and inputs_b.
inline GivenGroups given_groups(const runner::Run& run, std::size_t d) {
    const std::string path = run.string("inputs");
    if (path.empty()) return {run.matrix("inputs_a"), run.matrix("inputs_b"), {}};
    const io::SafetensorsHeader header = io::read_safetensors_header(path);
    GivenGroups g;
    if (header.find("inputs")) {
        if (!header.find("group"))
            throw Error(path + ": tensor 'inputs' needs a tensor 'group' of 0/1 labels beside it (or give 'inputs_a' and 'inputs_b')");
        const auto rows = detail::rows_of(header, "inputs", d, run.is_float64());
        const io::TensorEntry& ge = *header.find("group");
        if (ge.shape != std::vector<std::size_t>{rows.size()})
            throw Error(fmt::format("{}: tensor 'group' has shape [{}], expected [{}] (one label per row of 'inputs')", path,
                                    fmt::join(ge.shape, ", "), rows.size()));
        const auto labels = io::read_tensor(header, ge).as_doubles();
        for (std::size_t i = 0; i < rows.size(); ++i) {
            if (labels[i] != 0 && labels[i] != 1)
                throw Error(fmt::format("{}: tensor 'group' row {} is {}, not 0 or 1", path, i, labels[i]));
            (labels[i] == 1 ? g.a : g.b).push_back(rows[i]);
        }
    } else if (header.find("inputs_a") || header.find("inputs_b")) {
        g.a = detail::rows_of(header, "inputs_a", d, run.is_float64());
        g.b = detail::rows_of(header, "inputs_b", d, run.is_float64());
    } else {
        throw Error(path + ": no tensor 'inputs' (with 'group') or 'inputs_a' and 'inputs_b'");
    }
    if (const io::TensorEntry* q = header.find("readout")) {
        if (q->shape != std::vector<std::size_t>{d})
            throw Error(fmt::format("{}: tensor 'readout' has shape [{}], expected [{}]", path, fmt::join(q->shape, ", "), d));
        g.readout = io::read_tensor(header, *q).as_doubles();
        for (double x : g.readout)
            if (!std::isfinite(x)) throw Error(path + ": tensor 'readout' holds a value that is not finite");
    }
    for (const auto* group : {&g.a, &g.b})
        if (group->size() < 4)
            throw Error(fmt::format("{}: group {} has {} inputs; at least 4 a group are needed (2 for discovery, 2 held out)", path,
                                    group == &g.a ? "a" : "b", group->size()));
    return g;
}

}  // namespace ffn::experiments
