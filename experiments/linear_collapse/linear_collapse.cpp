// linear_collapse: doc 001's claim that without its activation the FFN is
// one d x d affine map (claims N2, P6). The product W_down W_up and its rank
// (float64, numpy's rule) against the ceiling min(d, m); the single layer
// built from it and its residual against the two-layer net on random tokens;
// the parameter counts. With the activation kept, the same replacement fails,
// which is the point of the activation; and so does every affine map: the
// best one, fitted by least squares on many more tokens than its d + 1
// coefficients per output, leaves a residual of the outputs' own order.
#include <algorithm>
#include <cmath>

#include "analysis/affine_fit.h"
#include "analysis/collapse.h"
#include "analysis/rank.h"
#include "experiments/support/ffn.h"
#include "runner/experiment.h"

namespace ffn::experiments::linear_collapse {

namespace {

using report::ColumnType;

const FfnKeys kKeys{.d = 64, .m = 256, .tokens = 10, .activation = "identity",
                    .activation_help = "identity: the activation dropped", .init_key = true};

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    Ffn<T> ffn = make_ffn<T>(run, kKeys);
    const std::size_t d = ffn.d, m = ffn.m;
    nn::MLP<T>& mlp = ffn.mlp;
    const nn::Matrix<T>& X = ffn.inputs;
    // The replacement is built from the weights alone: the activation is
    // ignored there, as if it had been dropped.
    nn::Linear<T> single = analysis::collapse_to_linear(mlp);
    const auto rank = analysis::matrix_rank_of(single.weight);
    const nn::Matrix<T> two_layer = mlp.forward_with_hook(X);
    const nn::Matrix<T> one_layer = nn::apply(single, X);
    const double residual = nn::max_abs_difference(two_layer, one_layer);
    const double relative = residual / std::max(nn::max_abs(two_layer), 1e-300);

    // The best affine map of the net, fitted on fresh tokens: on as few as
    // d + 1 tokens some affine map fits any net exactly, so `fit_tokens`
    // is many times that. Its relative residual is the RMS of what it
    // misses over the RMS of the outputs about their mean.
    const auto fit_tokens = static_cast<std::size_t>(run.integer("fit_tokens"));
    const nn::Matrix<T> F = normal_inputs<T>(run, fit_tokens, d, fmt::format("d={} affine fit", d));
    const nn::Matrix<T> FY = mlp.forward_with_hook(F);
    const auto fit = analysis::fit_rows(F, FY);
    const double affine_relative = std::sqrt(analysis::residual_sum_of_squares(fit.solve(), F, FY) / fit.total_sum_of_squares());

    report::Table t("collapse");
    t.add_column("d", ColumnType::integer)
        .add_column("m", ColumnType::integer)
        .add_column("activation", ColumnType::text)
        .add_column("dtype", ColumnType::text)
        .add_column("rank", ColumnType::integer)
        .add_column("rank_ceiling", ColumnType::integer)
        .add_column("residual_max_abs", ColumnType::real, 3)
        .add_column("residual_relative", ColumnType::real, 3)
        .add_column("collapses", ColumnType::boolean)
        .add_column("weights_two_layer", ColumnType::integer)
        .add_column("weights_one_matrix", ColumnType::integer)
        .add_column("fit_tokens", ColumnType::integer)
        .add_column("best_affine_relative_rms", ColumnType::real, 3);
    t.add_row({static_cast<std::int64_t>(d), static_cast<std::int64_t>(m), run.string("activation"), run.string("dtype"),
               static_cast<std::int64_t>(rank.rank), static_cast<std::int64_t>(std::min(d, m)), residual, relative,
               relative < identity_tolerance(run.is_float64()), static_cast<std::int64_t>(2 * d * m),
               static_cast<std::int64_t>(d * d), static_cast<std::int64_t>(fit_tokens), affine_relative});
    return {t};
}


}  // namespace

runner::ExperimentKind make() {
    runner::Schema schema;
    add_ffn_keys(schema, kKeys);
    schema.add({.path = "fit_tokens", .type = runner::KeyType::integer, .default_value = 4096, .min = 2.0, .max = 1e6,
                .help = "fresh N(0,1) tokens on which the best affine map of the net is fitted (many more than d + 1)"});
    return {.name = "linear_collapse",
            .description = "without its activation the FFN is one d x d map: rank, residual, parameter counts",
            .schema = std::move(schema),
            .headlines = {{"collapse", {"activation", "rank", "rank_ceiling", "residual_relative", "collapses", "best_affine_relative_rms"}}},
            .keys_from_files = ffn_keys_from_files,
            .validate =
                [](const runner::Plan& plan) {
                    refuse_runs_beyond_memory(plan, {"d", "m", "tokens", "fit_tokens"}, [](const runner::Run& r) {
                        const double d = static_cast<double>(r.integer("d")), m = static_cast<double>(r.integer("m"));
                        return ffn_run_bytes(r) + (r.is_float64() ? 8.0 : 4.0) * 3 * static_cast<double>(r.integer("fit_tokens")) * (d + m);
                    });
                },
            .run = by_dtype<compute<float>, compute<double>>};
}

}  // namespace ffn::experiments::linear_collapse
