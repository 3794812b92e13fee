// key_value: the FFN as a key-value memory (docs 003, 004; claims N3):
// F(x) = sum_i act(k_i . x + b_i) v_i + b_out, with k_i row i of W_up and
// v_i column i of W_down. The sum is computed term by term with plain loops,
// independently of the layers' products, and compared with F(X). Three
// cases show the output-bias caveat: with b_out = 0 the two agree to
// rounding; with b_out kept but left out of the sum they differ by b_out;
// with b_out added to the sum they agree again.
#include "experiments/support/ffn.h"
#include "runner/experiment.h"

namespace ffn::experiments::key_value {

namespace {

using report::ColumnType;

const FfnKeys kKeys{.d = 64, .m = 256, .tokens = 10};

template <class T>
nn::Matrix<T> key_value_sum(const nn::MLP<T>& mlp, const nn::Matrix<T>& X, bool add_output_bias) {
    const auto& up = mlp.layers[0];
    const auto& down = mlp.layers[1];
    const std::size_t tokens = X.shape()[0], d = up.in_features(), m = up.out_features(), out = down.out_features();
    nn::Matrix<T> Y = xt::zeros<T>({tokens, out});
    for (std::size_t t = 0; t < tokens; ++t) {
        for (std::size_t i = 0; i < m; ++i) {
            T score = up.has_bias() ? up.bias(i) : T(0);  // k_i . x + b_i
            for (std::size_t j = 0; j < d; ++j) score += up.weight(i, j) * X(t, j);
            const T coefficient = nn::activate(mlp.activation, score);
            for (std::size_t o = 0; o < out; ++o) Y(t, o) += coefficient * down.weight(o, i);  // + act(.) v_i
        }
        if (add_output_bias && down.has_bias())
            for (std::size_t o = 0; o < out; ++o) Y(t, o) += down.bias(o);
    }
    return Y;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    Ffn<T> ffn = make_ffn<T>(run, kKeys);
    nn::MLP<T>& mlp = ffn.mlp;
    const nn::Matrix<T>& X = ffn.inputs;

    report::Table t("key_value");
    t.add_column("dtype", ColumnType::text)
        .add_column("case", ColumnType::text)
        .add_column("max_abs", ColumnType::real, 3)
        .add_column("relative", ColumnType::real, 3)
        .add_column("max_abs_b_out", ColumnType::real, 3)
        .add_column("agrees", ColumnType::boolean);
    t.add_key("case");
    auto add = [&](const std::string& name, const nn::Matrix<T>& F, const nn::Matrix<T>& sum) {
        const double diff = nn::max_abs_difference(F, sum), rel = diff / std::max(nn::max_abs(F), 1e-300);
        double bias = 0;
        for (auto b : mlp.layers[1].bias) bias = std::max(bias, std::fabs(static_cast<double>(b)));
        t.add_row({run.string("dtype"), name, diff, rel, bias, rel < identity_tolerance(run.is_float64())});
    };
    add("b_out kept, sum without it", mlp.forward_with_hook(X), key_value_sum(mlp, X, false));
    add("b_out kept and added to the sum", mlp.forward_with_hook(X), key_value_sum(mlp, X, true));
    std::fill(mlp.layers[1].bias.begin(), mlp.layers[1].bias.end(), T(0));
    add("b_out = 0", mlp.forward_with_hook(X), key_value_sum(mlp, X, false));
    return {t};
}


}  // namespace

runner::ExperimentKind make() {
    runner::Schema schema;
    add_ffn_keys(schema, kKeys);
    return {.name = "key_value",
            .description = "F(x) = sum_i act(k_i.x + b_i) v_i term by term, with the output-bias caveat",
            .schema = std::move(schema),
            .headlines = {{"key_value", {"case", "relative", "agrees"}}},
            .keys_from_files = ffn_keys_from_files,
            .validate = refuse_ffn_beyond_memory,
            .run = by_dtype<compute<float>, compute<double>>};
}

}  // namespace ffn::experiments::key_value
