#pragma once
// One MLP layer of someone else's checkpoint, read by its standard names.
// A layout is a row of a table, not a loader: where the layer's tensors
// sit (the block stacks, with and without the LM-head wrapper's prefix),
// their roles (up, gate, down), whether a weight is stored transposed
// (GPT-2's Conv1D keeps [in, out]), the activation and the config.json key
// that may name another. One loader applies whichever row the names match.
//
//   gpt2      [transformer.]h.N.mlp.c_fc / c_proj        Conv1D, gelu_new
//   gpt_neox  [gpt_neox.]layers.N.mlp.dense_h_to_4h / dense_4h_to_h, exact GELU
//   llama     [model.]layers.N.mlp.gate_proj / up_proj / down_proj, SiLU,
//             biases only where the checkpoint has them (mlp_bias)
//
// Values widen exactly from F16, BF16, F32 (F64 rounds to nearest for a
// float32 layer); a NaN, an infinity or a value beyond the layer's dtype is
// refused, as are quantised checkpoints (GPTQ/AWQ's qweight, I8, F8).
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/checkpoint.h"
#include "nn/activation.h"
#include "nn/mlp.h"

namespace ffn::nn {

// The layouts by name, for a config's "layout" key and messages.
const std::vector<std::string>& layout_names();

// The layer a checkpoint holds, before any weight is read.
struct LayerSpec {
    std::string layout;  // a name of layout_names()
    std::size_t layer = 0, d = 0, hidden = 0;
    std::size_t layers = 0;  // how many blocks the checkpoint has
    Activation activation = Activation::relu;
    bool gated = false, biases = false;
    std::string source;  // "checkpoint/model.safetensors, layer 3 (gpt2)"
};

// Finds the layout from the tensor names (or checks `layout` when the user
// names one) and the layer's shapes from the headers; the activation from
// config.json when it names one. Throws ffn::Error with one line naming the
// checkpoint: no layout matches (the names it looked for), several do (name
// one), `layer` missing where there are several or out of range ("layer
// 12: the checkpoint has layers 0-11"), shapes that disagree, an
// activation config.json names that ffn-lab does not have, a quantised
// layer.
LayerSpec find_layer(const io::Checkpoint& checkpoint, std::optional<std::size_t> layer,
                     const std::optional<std::string>& layout = std::nullopt);

// The layer's module, weights read from its tensors only: an MLP ({d,
// hidden, d}) or a GatedMLP, as PyTorch's module of the same layout computes
// it.
template <class T>
struct LoadedLayer {
    LayerSpec spec;
    std::unique_ptr<MLP<T>> plain;
    std::unique_ptr<GatedMLP<T>> gated;

    Module<T>& module() { return plain ? static_cast<Module<T>&>(*plain) : *gated; }
    // The pre-activation the firing fraction reads (the gate's, gated), and
    // the hidden values the down projection reads (act(gate) * up, gated),
    // tokens x hidden.
    Matrix<T> pre_activation(const Matrix<T>& X) const;
    Matrix<T> hidden(const Matrix<T>& X) const;
    const Linear<T>& down() const { return plain ? plain->layers.back() : gated->down; }
};

template <class T>
LoadedLayer<T> load_layer(const io::Checkpoint& checkpoint, const LayerSpec& spec);

// The tensor names of the layer, by role ("up", "gate", "down" and their
// biases), for messages and for tests that write checkpoints.
std::vector<std::pair<std::string, std::string>> layer_tensor_names(const io::Checkpoint& checkpoint, const LayerSpec& spec);

}  // namespace ffn::nn
