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
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "experiments/support/ffn.h"
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
inline std::optional<FoundLayer> checkpoint_layer(const std::string& weights, const std::string& layout, std::int64_t layer) {
    if (weights.empty()) {
        if (layer >= 0) throw Error("key 'layer': a layer is read from a checkpoint's 'weights', and no weights are given (--set ~layer)");
        return std::nullopt;
    }
    std::optional<io::Checkpoint> checkpoint;
    if (layout != "sequential") checkpoint = io::Checkpoint::open(weights);
    if (!checkpoint || (layout.empty() && (checkpoint->has("up.weight") || checkpoint->has("0.weight")))) {
        if (layer >= 0)
            throw Error(fmt::format("key 'layer': {} is one d-m-d model (ffn-lab's or nn.Sequential's names), not a checkpoint of "
                                    "numbered layers: leave 'layer' out (--set ~layer)",
                                    weights));
        return std::nullopt;
    }
    nn::LayerSpec spec = nn::find_layer(*checkpoint, layer >= 0 ? std::optional<std::size_t>(static_cast<std::size_t>(layer)) : std::nullopt,
                                        layout.empty() ? std::nullopt : std::optional<std::string>(layout));
    return FoundLayer{std::move(*checkpoint), std::move(spec)};
}
inline std::optional<FoundLayer> checkpoint_layer(const runner::Run& run) {
    return checkpoint_layer(run.string("weights"), run.string("layout"), run.integer("layer"));
}

// Two groups of inputs, rows of d values.
struct GivenGroups {
    std::vector<std::vector<double>> a, b;
    std::vector<double> readout;  // from the file; empty if it has none
};


// What given_groups will read, from the file's header and its labels
// alone (a run's validation reads no inputs): the group sizes and the
// readout's length.
struct GivenShape {
    std::size_t a = 0, b = 0, readout = 0;
};

namespace detail {

inline const io::TensorEntry& rows_entry(const io::SafetensorsHeader& header, const std::string& name, std::size_t d) {
    const io::TensorEntry* e = header.find(name);
    if (!e) throw Error(fmt::format("{}: no tensor '{}'", header.path, name));
    if (e->shape.size() != 2 || e->shape[1] != d)
        throw Error(fmt::format("{}: tensor '{}' has shape [{}], the layer reads rows of d = {}", header.path, name,
                                fmt::join(e->shape, ", "), d));
    return *e;
}

// The 0/1 labels of `group`, one per row of `inputs`.
inline std::vector<double> labels_of(const io::SafetensorsHeader& header, std::size_t rows) {
    const io::TensorEntry* ge = header.find("group");
    if (!ge) throw Error(header.path + ": tensor 'inputs' needs a tensor 'group' of 0/1 labels beside it (or give 'inputs_a' and 'inputs_b')");
    if (ge->shape != std::vector<std::size_t>{rows})
        throw Error(fmt::format("{}: tensor 'group' has shape [{}], expected [{}] (one label per row of 'inputs')", header.path,
                                fmt::join(ge->shape, ", "), rows));
    const auto labels = io::read_tensor(header, *ge).as_doubles();
    for (std::size_t i = 0; i < rows; ++i)
        if (labels[i] != 0 && labels[i] != 1)
            throw Error(fmt::format("{}: tensor 'group' row {} is {}, not 0 or 1", header.path, i, labels[i]));
    return labels;
}

inline const io::TensorEntry* readout_entry(const io::SafetensorsHeader& header, std::size_t d) {
    const io::TensorEntry* q = header.find("readout");
    if (q && q->shape != std::vector<std::size_t>{d})
        throw Error(fmt::format("{}: tensor 'readout' has shape [{}], expected [{}]", header.path, fmt::join(q->shape, ", "), d));
    return q;
}

// Tensor `name`'s rows of d values; a value the run's dtype cannot hold
// would turn every contrast and ablation of the run into NaN.
inline std::vector<std::vector<double>> checked_rows(const io::SafetensorsHeader& header, const std::string& name, std::size_t d,
                                                     const runner::Run& run) {
    const io::TensorEntry& e = rows_entry(header, name, d);
    const auto values = io::read_tensor(header, e).as_doubles();
    const double largest = run.is_float64() ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
    std::vector<std::vector<double>> rows(e.shape[0], std::vector<double>(d));
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (!(std::abs(values[i]) <= largest))
            throw Error(fmt::format("{}: tensor '{}' row {} holds {}, not a finite {} value", header.path, name, i / d, values[i],
                                    run.string("dtype")));
        rows[i / d][i % d] = values[i];
    }
    return rows;
}

inline bool holds_pair(const io::SafetensorsHeader& header) {
    if (header.find("inputs") && (header.find("inputs_a") || header.find("inputs_b")))
        throw Error(header.path + ": holds both 'inputs' and 'inputs_a'/'inputs_b'; keep one form, so that the layer's inputs are one set");
    if (header.find("inputs")) return false;
    if (header.find("inputs_a") || header.find("inputs_b")) return true;
    throw Error(header.path + ": no tensor 'inputs' (with 'group') or 'inputs_a' and 'inputs_b'");
}

}  // namespace detail

inline GivenShape given_shape(const std::string& path, std::size_t d) {
    const io::SafetensorsHeader header = io::read_safetensors_header(path);
    GivenShape shape;
    if (detail::holds_pair(header)) {
        shape.a = detail::rows_entry(header, "inputs_a", d).shape[0];
        shape.b = detail::rows_entry(header, "inputs_b", d).shape[0];
    } else {
        const auto labels = detail::labels_of(header, detail::rows_entry(header, "inputs", d).shape[0]);
        for (const double l : labels) ++(l == 1 ? shape.a : shape.b);
    }
    if (detail::readout_entry(header, d)) shape.readout = d;
    return shape;
}

// The inputs file's tensor `name` of `length` finite values (a readout, a
// direction); empty when the file has no such tensor.
inline std::vector<double> file_vector(const std::string& path, const std::string& name, std::size_t length) {
    const io::SafetensorsHeader header = io::read_safetensors_header(path);
    const io::TensorEntry* e = header.find(name);
    if (!e) return {};
    if (e->shape != std::vector<std::size_t>{length})
        throw Error(fmt::format("{}: tensor '{}' has shape [{}], expected [{}]", path, name, fmt::join(e->shape, ", "), length));
    std::vector<double> values = io::read_tensor(header, *e).as_doubles();
    for (double x : values)
        if (!std::isfinite(x)) throw Error(fmt::format("{}: tensor '{}' holds a value that is not finite", path, name));
    return values;
}

// Every row of a run's `inputs` file (both groups, a's first, where it
// holds two), checked as given_groups checks them.
template <class T>
nn::Matrix<T> input_rows(const runner::Run& run, std::size_t d);

// The groups of a run with groups "given": from its `inputs` file, else
// from the config's inputs_a and inputs_b.
inline GivenGroups given_groups(const runner::Run& run, std::size_t d) {
    const std::string path = run.string("inputs");
    if (path.empty()) return {run.matrix("inputs_a"), run.matrix("inputs_b"), {}};
    const io::SafetensorsHeader header = io::read_safetensors_header(path);
    const auto rows_of = [&](const std::string& name) { return detail::checked_rows(header, name, d, run); };
    GivenGroups g;
    if (detail::holds_pair(header)) {
        g.a = rows_of("inputs_a");
        g.b = rows_of("inputs_b");
    } else {
        auto rows = rows_of("inputs");
        const auto labels = detail::labels_of(header, rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) (labels[i] == 1 ? g.a : g.b).push_back(std::move(rows[i]));
    }
    g.readout = file_vector(path, "readout", d);
    return g;
}

template <class T>
nn::Matrix<T> input_rows(const runner::Run& run, std::size_t d) {
    const io::SafetensorsHeader header = io::read_safetensors_header(run.string("inputs"));
    std::vector<std::vector<double>> rows;
    if (!detail::holds_pair(header) && !header.find("group")) {
        rows = detail::checked_rows(header, "inputs", d, run);  // no labels to check
    } else {
        GivenGroups g = given_groups(run, d);
        rows = std::move(g.a);
        rows.insert(rows.end(), g.b.begin(), g.b.end());
    }
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({rows.size(), d});
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t k = 0; k < d; ++k) X.data()[r * d + k] = static_cast<T>(rows[r][k]);
    return X;
}

// The number of rows input_rows gives, from the header alone.
inline std::size_t input_row_count(const std::string& path, std::size_t d) {
    const io::SafetensorsHeader header = io::read_safetensors_header(path);
    if (detail::holds_pair(header)) return detail::rows_entry(header, "inputs_a", d).shape[0] + detail::rows_entry(header, "inputs_b", d).shape[0];
    return detail::rows_entry(header, "inputs", d).shape[0];
}

// A loaded layer on an inputs file draws nothing at random: every seed
// would repeat one run (and a spread over seeds of identical numbers).
inline void refuse_seeds_of_a_given_layer(const runner::Plan& plan) {
    if (plan.seeds.size() < 2) return;
    for (const runner::Run* r : plan.first_run_of_each_point())
        if (!r->string("inputs").empty() && !r->string("weights").empty())
            throw Error("key 'seeds': a loaded layer on an inputs file draws nothing at random, so every seed would repeat "
                        "one run; give one seed (--set seeds=[0])");
}

// The keys_from_files of the kinds that read a checkpoint's layer or a
// d-m-d model (firing_fraction, layer_lab): a checkpoint's layer fixes d,
// m and the activation (and an inputs file the tokens); any other weights
// file as ffn_keys_from_files says.
inline void layer_keys_from_files(runner::GridPoint& point, const std::set<std::string>& given) {
    const runner::Json& v = point.values;
    const std::string weights = v.value("weights", "");
    if (weights.empty()) return;
    const auto found = checkpoint_layer(weights, v.value("layout", ""), v.value("layer", std::int64_t{-1}));
    if (!found) return ffn_keys_from_files(point, given);
    const nn::LayerSpec& spec = found->spec;
    const std::string inputs = v.value("inputs", "");
    std::vector<std::pair<std::string, runner::Json>> fixed = {{"d", spec.d}, {"m", spec.hidden}, {"activation", nn::to_string(spec.activation)}};
    if (!inputs.empty()) fixed.emplace_back("tokens", input_row_count(inputs, spec.d));
    take_file_keys(point, given, spec.source,
                   fmt::format("{} -> {}, {}{}", spec.d, spec.hidden, nn::to_string(spec.activation),
                               inputs.empty() ? "" : fmt::format(", {} inputs", fixed.back().second.get<std::size_t>())),
                   fixed);
}

}  // namespace ffn::experiments
