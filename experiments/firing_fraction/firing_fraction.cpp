// firing_fraction: how many hidden units respond to a token at random
// initialisation (doc 001 prints 0.5030; claims S1). Per run, N(0,1) tokens
// through a freshly initialised up-projection; the hidden activations are
// read with a forward hook. Three fractions of (token, unit) pairs:
// positive pre-activation; non-zero output (ReLU's "active"; GELU and SiLU
// have no exact zeros, so nearly every unit counts); output above a small
// threshold. Mean and sample standard deviation over seeds.
#include <cmath>

#include "experiments/support/ffn.h"
#include "runner/experiment.h"

namespace ffn::experiments::firing_fraction {

namespace {

using report::ColumnType;

const FfnKeys kKeys{.d = 512, .m = 2048, .tokens = 10, .init_key = true, .inputs_named_by_tokens = true};

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    Ffn<T> ffn = make_ffn<T>(run, kKeys);
    const std::size_t m = ffn.m, tokens = ffn.tokens;
    nn::MLP<T>& mlp = ffn.mlp;
    const nn::Matrix<T>& X = ffn.inputs;
    const double threshold = run.number("threshold");
    const nn::Matrix<T> Z = nn::apply(mlp.layers[0], X);
    std::size_t positive = 0, nonzero = 0, above = 0;
    mlp.forward_with_hook(X, [&](std::size_t layer, nn::Matrix<T>& H) {
        if (layer != 0) return;
        for (std::size_t i = 0; i < H.size(); ++i) {
            positive += Z.data()[i] > T(0);
            nonzero += H.data()[i] != T(0);
            above += static_cast<double>(H.data()[i]) > threshold;
        }
    });
    const double n = static_cast<double>(tokens * m);
    report::Table t("run");
    t.add_column("positive", ColumnType::real).add_column("nonzero", ColumnType::real).add_column("above", ColumnType::real);
    t.add_row({positive / n, nonzero / n, above / n});
    return {t};
}

std::vector<report::Table> run_firing(const runner::Run& run) {
    return with_dtype(run, [&]<class T>() { return compute<T>(run); });
}

}  // namespace

runner::ExperimentKind make() {
    using enum runner::Statistic;
    runner::Schema schema;
    add_ffn_keys(schema, kKeys);
    schema.add({.path = "threshold", .type = runner::KeyType::number, .default_value = 0.01, .min = 0.0,
                .help = "an output above this counts as firing"});
    return {.name = "firing_fraction",
            .description = "fraction of hidden units firing at random init, mean and sd over seeds",
            .schema = std::move(schema),
            .headlines = {{"firing", {"d", "m", "activation", "positive_mean", "positive_sd"}}},
            .validate = refuse_ffn_beyond_memory,
            .run = run_firing,
            .seed_statistics = runner::SeedStatistics{
                .table = "firing",
                .keys = {"d", "m", "tokens", "activation", "threshold"},  // the protocol's, unless swept
                .columns = {{"positive", "positive", {mean, sd}},
                            {"nonzero", "nonzero", {mean, sd}},
                            {"above", "above_threshold", {mean, sd}}}}};
}

}  // namespace ffn::experiments::firing_fraction
