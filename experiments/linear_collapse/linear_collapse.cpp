// linear_collapse: seed 001's claim that without its activation the FFN is
// one d x d affine map (claims N2, P6). The product W_down W_up and its rank
// (float64, numpy's rule) against the ceiling min(d, m); the single layer
// built from it and its residual against the two-layer net on random tokens;
// the parameter counts. With the activation kept, the same replacement fails,
// which is the point of the activation.
#include <algorithm>

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
        .add_column("weights_one_matrix", ColumnType::integer);
    t.add_row({static_cast<std::int64_t>(d), static_cast<std::int64_t>(m), run.string("activation"), run.string("dtype"),
               static_cast<std::int64_t>(rank.rank), static_cast<std::int64_t>(std::min(d, m)), residual, relative,
               relative < identity_tolerance(run.is_float64()), static_cast<std::int64_t>(2 * d * m),
               static_cast<std::int64_t>(d * d)});
    return {t};
}

std::vector<report::Table> run_collapse(const runner::Run& run) {
    return with_dtype(run, [&]<class T>() { return compute<T>(run); });
}

}  // namespace

runner::ExperimentKind make() {
    runner::Schema schema;
    add_ffn_keys(schema, kKeys);
    return {.name = "linear_collapse",
            .description = "without its activation the FFN is one d x d map: rank, residual, parameter counts",
            .schema = std::move(schema),
            .validate = refuse_ffn_beyond_memory,
            .run = run_collapse};
}

}  // namespace ffn::experiments::linear_collapse
