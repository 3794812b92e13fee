// firing_fraction: how many hidden units respond to a token at random
// initialisation (doc 001 prints 0.5030; claims S1). Per run, N(0,1) tokens
// through a freshly initialised up-projection; the hidden activations are
// read with a forward hook. Three fractions of (token, unit) pairs:
// positive pre-activation; non-zero output (ReLU's "active"; GELU and SiLU
// have no exact zeros, so nearly every unit counts); output above a small
// threshold. Mean and sample standard deviation over seeds.
#include <cmath>

#include "experiments/support/ffn.h"
#include "experiments/support/real_layer.h"
#include "runner/experiment.h"

namespace ffn::experiments::firing_fraction {

namespace {

using report::ColumnType;

const FfnKeys kKeys{.d = 512, .m = 2048, .tokens = 10, .init_key = true, .inputs_named_by_tokens = true};

// Counts over every (token, unit) pair of Z (pre-activations) and H (the
// hidden values the down projection reads).
struct Counts {
    std::size_t positive = 0, nonzero = 0, above = 0;
};
template <class T>
Counts count_firing(const nn::Matrix<T>& Z, const nn::Matrix<T>& H, double threshold) {
    Counts c;
    for (std::size_t i = 0; i < H.size(); ++i) {
        c.positive += Z.data()[i] > T(0);
        c.nonzero += H.data()[i] != T(0);
        c.above += static_cast<double>(H.data()[i]) > threshold;
    }
    return c;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const double threshold = run.number("threshold");
    Counts counts;
    std::size_t pairs = 0;
    if (const auto found = checkpoint_layer(run)) {
        // A checkpoint's layer on the given inputs (or on N(0,1) tokens):
        // a gated layer's pre-activation is its gate's, its hidden values
        // act(gate) * up.
        const nn::LoadedLayer<T> layer = nn::load_layer<T>(found->checkpoint, found->spec);
        const std::size_t d = found->spec.d;
        const nn::Matrix<T> X = run.string("inputs").empty()
                                    ? normal_inputs<T>(run, static_cast<std::size_t>(run.integer("tokens")), d,
                                                       fmt::format("d={} tokens={}", d, run.integer("tokens")))
                                    : input_rows<T>(run, d);
        counts = count_firing(layer.pre_activation(X), layer.hidden(X), threshold);
        pairs = X.shape()[0] * found->spec.hidden;
    } else {
        Ffn<T> ffn = make_ffn<T>(run, kKeys);
        nn::MLP<T>& mlp = ffn.mlp;
        const nn::Matrix<T> Z = nn::apply(mlp.layers[0], ffn.inputs);
        mlp.forward_with_hook(ffn.inputs, [&](std::size_t layer, nn::Matrix<T>& H) {
            if (layer == 0) counts = count_firing(Z, H, threshold);
        });
        pairs = ffn.tokens * ffn.m;
    }
    const auto [positive, nonzero, above] = counts;
    const double n = static_cast<double>(pairs);
    report::Table t("run");
    t.add_column("positive", ColumnType::real).add_column("nonzero", ColumnType::real).add_column("above", ColumnType::real);
    t.add_row({positive / n, nonzero / n, above / n});
    return {t};
}

// An inputs file feeds a checkpoint's layer only. (The layer's d, m,
// activation and inputs count are the run's keys: layer_keys_from_files.)
void refuse_inputs_without_layer(const runner::Run& r) {
    if (!r.string("inputs").empty() && !checkpoint_layer(r))
        throw Error("key 'inputs': the inputs file feeds a checkpoint's layer ('weights' of layout gpt2, gpt_neox or llama)");
}


}  // namespace

runner::ExperimentKind make() {
    using enum runner::Statistic;
    runner::Schema schema;
    add_ffn_keys(schema, kKeys);
    add_layer_keys(schema);
    schema.add({.path = "threshold", .type = runner::KeyType::number, .default_value = 0.01, .min = 0.0,
                .help = "an output above this counts as firing"});
    return {.name = "firing_fraction",
            .description = "fraction of hidden units firing at random init, mean and sd over seeds",
            .schema = std::move(schema),
            .headlines = {{"firing", {"d", "m", "activation", "positive_mean", "positive_sd"}}},
            .keys_from_files = layer_keys_from_files,
            .validate = [](const runner::Plan& plan) {
                refuse_ffn_beyond_memory(plan);
                for (const runner::Run* r : plan.first_run_of_each_point()) refuse_inputs_without_layer(*r);
                refuse_seeds_of_a_given_layer(plan);
            },
            .run = by_dtype<compute<float>, compute<double>>,
            .seed_statistics = runner::SeedStatistics{
                .table = "firing",
                .keys = {"d", "m", "tokens", "activation", "threshold"},  // the protocol's, unless swept
                .columns = {{"positive", "positive", {mean, sd}},
                            {"nonzero", "nonzero", {mean, sd}},
                            {"above", "above_threshold", {mean, sd}}}}};
}

}  // namespace ffn::experiments::firing_fraction
