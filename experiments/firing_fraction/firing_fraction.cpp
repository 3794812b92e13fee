// firing_fraction: how many hidden units respond to a token at random
// initialisation (seed 001 prints 0.5030; claims S1). Per run, N(0,1) tokens
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

using report::Cell;
using report::ColumnType;

const FfnKeys kKeys{.d = 512, .m = 2048, .tokens = 10, .init_key = true, .inputs_named_by_tokens = true};

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    auto [d, m, tokens, mlp, X] = make_ffn<T>(run, kKeys);
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

std::pair<double, double> mean_sd(const std::vector<double>& v) {
    double mean = 0;
    for (double x : v) mean += x;
    mean /= static_cast<double>(v.size());
    double ss = 0;
    for (double x : v) ss += (x - mean) * (x - mean);
    return {mean, v.size() > 1 ? std::sqrt(ss / static_cast<double>(v.size() - 1)) : 0.0};  // sample sd (ddof = 1)
}

std::vector<report::Table> aggregate_firing(const runner::Plan& plan, std::vector<std::vector<report::Table>>& per_run) {
    report::Table t("firing");
    runner::add_swept_columns(plan, t);
    // The protocol's keys, unless the sweep already shows them.
    const std::vector<std::string> keys = {"d", "m", "tokens", "activation", "threshold"};
    std::vector<std::string> shown;
    for (const auto& k : keys)
        if (!t.find_column(k)) {
            const auto& v = plan.runs.front().raw(k);
            t.add_column(k, v.is_number_integer() ? ColumnType::integer : v.is_number() ? ColumnType::real : ColumnType::text);
            shown.push_back(k);
        }
    t.add_column("seeds", ColumnType::integer);
    for (const char* c : {"positive_mean", "positive_sd", "nonzero_mean", "nonzero_sd", "above_threshold_mean", "above_threshold_sd"})
        t.add_column(c, ColumnType::real, 4);
    for (const auto& group : runner::seed_groups(plan)) {
        const runner::Run& first = plan.runs[group.front()];
        std::vector<double> pos, nz, ab;
        for (std::size_t i : group) {
            const auto& r = per_run[i].front();
            pos.push_back(*report::as_number(r.at(0, "positive")));
            nz.push_back(*report::as_number(r.at(0, "nonzero")));
            ab.push_back(*report::as_number(r.at(0, "above")));
        }
        auto cells = runner::swept_cells(plan, group.front());
        for (const auto& k : shown) {
            const auto& v = first.raw(k);
            cells.push_back(v.is_number_integer() ? Cell{v.get<std::int64_t>()} : v.is_number() ? Cell{v.get<double>()} : Cell{v.get<std::string>()});
        }
        cells.push_back(static_cast<std::int64_t>(group.size()));
        for (const auto& v : {pos, nz, ab}) {
            const auto [mean, sd] = mean_sd(v);
            cells.push_back(mean);
            cells.push_back(sd);
        }
        t.add_row(std::move(cells));
    }
    return {t};
}

}  // namespace

runner::ExperimentKind make() {
    runner::Schema schema;
    add_ffn_keys(schema, kKeys);
    schema.add({.path = "threshold", .type = runner::KeyType::number, .default_value = 0.01, .min = 0.0,
                .help = "an output above this counts as firing"});
    return {.name = "firing_fraction",
            .description = "fraction of hidden units firing at random init, mean and sd over seeds",
            .schema = std::move(schema),
            .validate = refuse_ffn_beyond_memory,
            .run = run_firing,
            .aggregate = aggregate_firing};
}

}  // namespace ffn::experiments::firing_fraction
