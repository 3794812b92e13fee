#pragma once
// The fixture of the kinds that study one d-m-d MLP on random N(0,1) tokens
// (firing_fraction, key_value, linear_collapse, tokenwise): their standard
// keys declared once, the model and inputs of a run, and the memory bound
// those sizes imply. A kind's file then holds only its experiment.
#include <cstdint>
#include <string>

#include "experiments/support/run.h"
#include "nn/activation.h"
#include "nn/init.h"
#include "nn/mlp.h"

namespace ffn::experiments {

// A kind's defaults for the standard keys (the documents use different sizes).
struct FfnKeys {
    std::int64_t d = 64, m = 256, tokens = 10;
    double min_tokens = 1;
    std::string activation = "relu";
    std::string activation_help = "the hidden layer's activation";
    bool init_key = false;  // an "init" key; without it, PyTorch's default init
    // firing_fraction's inputs come from a stream named by d and tokens (the
    // others' by d alone): its expected tables were written so.
    bool inputs_named_by_tokens = false;
};

// Declares d, m, tokens, activation (and init), weights and names.
inline void add_ffn_keys(runner::Schema& schema, const FfnKeys& k) {
    using runner::KeyType;
    schema.add({.path = "d", .type = KeyType::integer, .default_value = k.d, .min = 1.0, .max = 8192.0, .help = "model width"});
    schema.add({.path = "m", .type = KeyType::integer, .default_value = k.m, .min = 1.0, .max = 65536.0, .help = "hidden width"});
    schema.add({.path = "tokens", .type = KeyType::integer, .default_value = k.tokens, .min = k.min_tokens, .max = 1e6,
                .help = "N(0,1) input tokens"});
    schema.add({.path = "activation", .type = KeyType::string, .default_value = k.activation,
                .choices = nn::activation_names(), .help = k.activation_help});
    if (k.init_key)
        schema.add({.path = "init", .type = KeyType::string, .default_value = "torch_default",
                    .choices = nn::init_scheme_names(), .help = "initialisation of a fresh model"});
    add_weight_keys(schema);
}

template <class T>
struct Ffn {
    std::size_t d, m, tokens;
    nn::MLP<T> mlp;
    nn::Matrix<T> inputs;  // tokens x d, N(0, 1)
};

// The run's model, from its weights file or initialised from a stream named
// by d and m (so a change of another key keeps the same weights), and its
// inputs.
template <class T>
Ffn<T> make_ffn(const runner::Run& run, const FfnKeys& k) {
    const auto d = static_cast<std::size_t>(run.integer("d")), m = static_cast<std::size_t>(run.integer("m"));
    const auto tokens = static_cast<std::size_t>(run.integer("tokens"));
    nn::MLP<T> mlp({d, m, d}, nn::parse_activation(run.string("activation")));
    load_or_initialize(run, mlp, k.init_key ? run.string("init") : "torch_default", fmt::format("d={} m={}", d, m));
    const std::string stream = k.inputs_named_by_tokens ? fmt::format("d={} tokens={}", d, tokens) : fmt::format("d={}", d);
    return {d, m, tokens, std::move(mlp), normal_inputs<T>(run, tokens, d, stream)};
}

// A d-m-d MLP applied to `tokens` tokens: its weights, a copy of them (the
// collapsed or reparametrised model), a d x d product with its SVD
// workspace, and a few tokens x (d + m) activations at once.
inline double ffn_run_bytes(const runner::Run& r) {
    const double d = static_cast<double>(r.integer("d")), m = static_cast<double>(r.integer("m"));
    const double tokens = static_cast<double>(r.integer("tokens"));
    return (r.is_float64() ? 8.0 : 4.0) * (4 * d * m + 4 * d * d + 6 * tokens * (d + m));
}

// The keys_from_files of these kinds: a weights file of ffn-lab's own
// fixes d, m and the activation its run recorded; an nn.Sequential file d
// and m, and, since it records no activation, an activation swept over it
// is refused.
inline void ffn_keys_from_files(runner::GridPoint& point, const std::set<std::string>& given) {
    const std::string weights = point.values.value("weights", "");
    if (weights.empty()) return;
    if (const auto facts = weights_facts(weights, point.values.value("names", runner::Json::object())))
        take_weights_file_keys(point, given, weights, *facts, {{"d", facts->in}, {"m", facts->hidden}},
                               fmt::format("{} -> {}", facts->in, facts->hidden));
}

// The validate hook of these kinds.
inline void refuse_ffn_beyond_memory(const runner::Plan& plan) {
    refuse_runs_beyond_memory(plan, {"d", "m", "tokens"}, ffn_run_bytes);
}

}  // namespace ffn::experiments
