// param_count: parameter budgets of a transformer block's attention
// projections, its feed-forward layer and a gated feed-forward layer, counted
// by instantiating the layers and summing the sizes of their tensors
// (docs 000, 001, 002, 003; claims P1-P5).
#include <fmt/format.h>

#include <algorithm>

#include "experiments/support/run.h"
#include "nn/mlp.h"
#include "runner/experiment.h"

namespace ffn::experiments::param_count {

namespace {

using report::ColumnType;

std::size_t weight_count(const std::vector<nn::ParamRef<float>>& params) {
    std::size_t n = 0;
    for (const auto& p : params)
        if (p.shape.size() == 2) n += p.size();
    return n;
}

std::size_t largest_tensor(const std::vector<nn::ParamRef<float>>& params) {
    std::size_t n = 0;
    for (const auto& p : params) n = std::max(n, p.size());
    return n;
}

std::string shape_text(const nn::Linear<float>& layer) {
    return fmt::format("{}x{}", layer.out_features(), layer.in_features());
}

std::vector<report::Table> run_param_count(const runner::Run& run) {
    const auto d = static_cast<std::size_t>(run.integer("d"));
    const auto m = static_cast<std::size_t>(run.integer("m"));
    // A gated FFN has three d x m matrices; 2/3 of m keeps its weights at the
    // plain FFN's 2dm (exactly when 3 divides 2m).
    const std::size_t gated_m = 2 * m / 3;

    // The layers are float32 and zero-filled: only their tensors' sizes are
    // read. Each lives in its own scope so the largest (d = 4096) fit at once.
    std::size_t attention = 0, ffn_weights = 0, ffn_params = 0, largest = 0, gated = 0, up_params = 0;
    std::string up_shape, down_shape;
    {
        nn::AttentionProjections<float> attn(d, /*bias=*/false);
        attention = nn::parameter_count(attn.parameters());
    }
    {
        nn::MLP<float> ffn({d, m, d}, nn::Activation::relu, /*bias=*/true);
        const auto params = ffn.parameters();
        ffn_weights = weight_count(params);
        ffn_params = nn::parameter_count(params);
        largest = largest_tensor(params);
        up_shape = shape_text(ffn.layers[0]);
        up_params = nn::parameter_count(ffn.layers[0].parameters());
        down_shape = shape_text(ffn.layers[1]);
    }
    {
        nn::GatedMLP<float> gated_ffn(d, gated_m, nn::Activation::silu, /*bias=*/false);
        gated = nn::parameter_count(gated_ffn.parameters());
    }

    report::Table t("params");
    t.add_column("d", ColumnType::integer)
        .add_column("m", ColumnType::integer)
        .add_column("attn_weights", ColumnType::integer)
        .add_column("ffn_weights", ColumnType::integer)
        .add_column("ffn_params", ColumnType::integer)
        .add_column("ffn_share", ColumnType::real, 6)
        .add_column("up_shape", ColumnType::text)
        .add_column("down_shape", ColumnType::text)
        .add_column("largest_matrix", ColumnType::integer)
        .add_column("ffn_flops_per_token", ColumnType::integer)
        .add_column("up_layer_params", ColumnType::integer)
        .add_column("up_layer_flops_per_token", ColumnType::integer)
        .add_column("gated_m_exact", ColumnType::real, 9)
        .add_column("gated_m", ColumnType::integer)
        .add_column("gated_weights", ColumnType::integer)
        .add_column("gated_over_ffn", ColumnType::real, 6)
        .add_column("gated_matches", ColumnType::boolean)
        .add_column("gated_shortfall", ColumnType::integer);
    auto i64 = [](std::size_t v) { return static_cast<std::int64_t>(v); };
    t.add_row({i64(d), i64(m), i64(attention), i64(ffn_weights), i64(ffn_params),
               static_cast<double>(ffn_weights) / static_cast<double>(attention + ffn_weights), up_shape,
               down_shape, i64(largest), i64(2 * ffn_weights), i64(up_params), i64(2 * d * m),
               2.0 * static_cast<double>(m) / 3.0, i64(gated_m), i64(gated),
               static_cast<double>(gated) / static_cast<double>(ffn_weights), gated == ffn_weights,
               i64(ffn_weights) - i64(gated)});
    return {t};
}

}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema{
        {.path = "d", .type = KeyType::integer, .default_value = nullptr, .min = 1.0, .max = 65536.0,
         .help = "model width"},
        {.path = "m", .type = KeyType::integer, .default_value = nullptr, .min = 1.0, .max = 262144.0,
         .help = "hidden width of the feed-forward layer"},
    };
    return {.name = "param_count",
            .description = "parameter counts of attention, FFN and gated FFN, from instantiated layers",
            .schema = std::move(schema),
            .headlines = {{"params", {"d", "m", "attn_weights", "ffn_weights", "ffn_params", "ffn_share", "gated_m", "gated_weights"}}},
            // The largest of the zero-filled float32 layers built one at a
            // time: attention's four d x d, or about 2dm of an FFN.
            .validate =
                [](const runner::Plan& plan) {
                    refuse_runs_beyond_memory(plan, {"d", "m"}, [](const runner::Run& r) {
                        const double d = static_cast<double>(r.integer("d")), m = static_cast<double>(r.integer("m"));
                        return 4.0 * std::max(4 * d * d, 2 * d * m + d + m);
                    });
                },
            .run = run_param_count,
            .random = false};
}

}  // namespace ffn::experiments::param_count
