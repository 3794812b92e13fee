// residual_ablation: doc 003's hand-built 3-4-3 MLP writing into a residual
// stream (claims X2). Forward values z, h, Delta, y at the worked input; the
// same pass with one hidden unit zeroed after the activation (a forward hook);
// and, for a linear readout q, the predicted score change -h_j q.c_j beside
// the change recomputed by ablating each unit j in turn; and Delta taken
// apart into each unit's write h_j c_j and the bias.
#include "experiments/support/run.h"
#include "report/text.h"
#include "nn/mlp.h"
#include "nn/norm.h"
#include "runner/experiment.h"

namespace ffn::experiments::residual_ablation {

namespace {

using report::ColumnType;

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const auto W_in = run.matrix("W_in"), W_out = run.matrix("W_out");
    const std::size_t m = W_in.size(), d = W_in[0].size();
    require_shape("W_out", W_out.size(), W_out[0].size(), d, m, "it writes the hidden layer back to the stream");
    require_length("b_in", run.numbers("b_in").size(), m, "one bias per hidden unit");
    require_length("b_out", run.numbers("b_out").size(), d, "one bias per stream coordinate");
    require_length("x", run.numbers("x").size(), d, "the stream width");
    require_length("readout", run.numbers("readout").size(), d, "q reads the stream");
    const auto ablate = run.integer("ablate");
    if (ablate < 1 || static_cast<std::size_t>(ablate) > m)
        throw Error("key 'ablate': expected a hidden unit between 1 and " + std::to_string(m) + ", got " +
                    std::to_string(ablate));

    nn::MLP<T> mlp({d, m, d}, nn::parse_activation(run.string("activation")));
    mlp.layers[0].weight = nn::to_matrix<T>(W_in);
    mlp.layers[0].bias = nn::to_vector<T>(run.numbers("b_in"));
    mlp.layers[1].weight = nn::to_matrix<T>(W_out);
    mlp.layers[1].bias = nn::to_vector<T>(run.numbers("b_out"));
    const nn::Vector<T> q = nn::to_vector<T>(run.numbers("readout"));

    // The branch reads u = N(x) and writes into x. The document omits N for
    // its arithmetic (norm "none": u = x); the pre-norm forms use PyTorch's
    // LayerNorm and RMSNorm without affine parameters (scale 1, shift 0).
    const nn::Matrix<T> X = nn::as_row(nn::to_vector<T>(run.numbers("x")));
    const std::string norm = run.string("norm");
    const double eps = run.number("norm_eps");
    const nn::Matrix<T> U = norm == "layernorm" ? nn::Matrix<T>(nn::LayerNorm<T>(d, eps).forward(X))
                            : norm == "rmsnorm" ? nn::Matrix<T>(nn::RMSNorm<T>(d, eps).forward(X))
                                                : X;
    nn::Matrix<T> h;
    const nn::Matrix<T> delta = mlp.forward_with_hook(U, [&](std::size_t, nn::Matrix<T>& hidden) { h = hidden; });
    const nn::Matrix<T> y = X + delta;

    auto ablated = [&](std::size_t unit, nn::Matrix<T>* h_out) {
        return mlp.forward_with_hook(U, [&](std::size_t, nn::Matrix<T>& hidden) {
            hidden(0, unit) = T(0);
            if (h_out) *h_out = hidden;
        });
    };
    nn::Matrix<T> h_ab;
    const nn::Matrix<T> delta_ab = ablated(static_cast<std::size_t>(ablate - 1), &h_ab);
    const nn::Matrix<T> y_ab = X + delta_ab;

    report::Table fwd("forward");
    fwd.add_column("quantity", ColumnType::text).add_column("value", ColumnType::text);
    fwd.add_key("quantity");
    fwd.add_row({std::string("x"), report::vector_text(nn::row_of(X))});
    if (norm != "none") fwd.add_row({"u = " + norm + "(x)", report::vector_text(nn::row_of(U))});
    fwd.add_row({std::string("z"), report::vector_text(nn::row_of(nn::apply(mlp.layers[0], U)))});
    fwd.add_row({std::string("h"), report::vector_text(nn::row_of(h))});
    fwd.add_row({std::string("Delta"), report::vector_text(nn::row_of(delta))});
    fwd.add_row({std::string("y"), report::vector_text(nn::row_of(y))});
    const std::string j = std::to_string(ablate);
    fwd.add_row({"h with h" + j + "=0", report::vector_text(nn::row_of(h_ab))});
    fwd.add_row({"Delta with h" + j + "=0", report::vector_text(nn::row_of(delta_ab))});
    fwd.add_row({"y with h" + j + "=0", report::vector_text(nn::row_of(y_ab))});
    fwd.add_row({"change in y", report::vector_text(nn::row_of(xt::eval(y_ab - y)))});

    // What each unit writes, h_j c_j (c_j: column j of W_out), then their
    // sum and the bias: Delta taken apart, so that units whose writes cancel
    // in a coordinate show it (003: units 2 and 4 in the second).
    report::Table writes("contributions");
    writes.add_column("term", ColumnType::text).add_column("h_j", ColumnType::real).add_column("writes", ColumnType::text);
    writes.add_key("term");
    nn::Vector<T> all = xt::zeros<T>({d});
    for (std::size_t u = 0; u < m; ++u) {
        nn::Vector<T> c = xt::zeros<T>({d});
        for (std::size_t i = 0; i < d; ++i) c(i) = h(0, u) * mlp.layers[1].weight(i, u);
        all += c;
        writes.add_row({"unit " + std::to_string(u + 1), static_cast<double>(h(0, u)), report::vector_text(c)});
    }
    writes.add_row({std::string("all units"), report::Cell{}, report::vector_text(all)});
    writes.add_row({std::string("b_out"), report::Cell{}, report::vector_text(mlp.layers[1].bias)});

    report::Table readout("readout");
    readout.add_column("unit", ColumnType::integer).add_key("unit");
    readout.add_column("h_j", ColumnType::real)
        .add_column("q.c_j", ColumnType::real)
        .add_column("predicted_change", ColumnType::real)
        .add_column("recomputed_change", ColumnType::real)
        .add_column("abs_difference", ColumnType::real, 3);
    const auto& W = mlp.layers[1].weight;
    const T score = xt::sum(nn::row_of(y) * q)();
    for (std::size_t u = 0; u < m; ++u) {
        T qc = 0;
        for (std::size_t i = 0; i < d; ++i) qc += q(i) * W(i, u);
        const T predicted = -h(0, u) * qc;
        const T recomputed = xt::sum(nn::row_of(xt::eval(X + ablated(u, nullptr))) * q)() - score;
        readout.add_row({static_cast<std::int64_t>(u + 1), static_cast<double>(h(0, u)), static_cast<double>(qc),
                         static_cast<double>(predicted), static_cast<double>(recomputed),
                         static_cast<double>(std::abs(predicted - recomputed))});
    }
    return {fwd, writes, readout};
}


}  // namespace

runner::ExperimentKind make() {
    using runner::Json;
    using runner::KeyType;
    runner::Schema schema{
        {.path = "W_in", .type = KeyType::matrix, .default_value = Json::parse("[[1,1,0],[0,-1,1],[1,0,-1],[-1,1,1]]"),
         .help = "m x d"},
        {.path = "b_in", .type = KeyType::number_list, .default_value = Json::parse("[0,-1,1,1]"), .help = "m"},
        {.path = "W_out", .type = KeyType::matrix, .default_value = Json::parse("[[1,0,-1,1],[0,1,0,-2],[1,-1,2,0]]"),
         .help = "d x m"},
        {.path = "b_out", .type = KeyType::number_list, .default_value = Json::parse("[0,0.5,0]"), .help = "d"},
        {.path = "activation", .type = KeyType::string, .default_value = "relu", .choices = nn::activation_names(),
         .help = "the hidden layer's activation"},
        {.path = "norm", .type = KeyType::string, .default_value = "none", .choices = {"none", "layernorm", "rmsnorm"},
         .help = "the branch's N in u = N(x); none is the document's arithmetic"},
        {.path = "norm_eps", .type = KeyType::number, .default_value = 1e-5, .min = 0.0, .max = 1.0,
         .help = "eps inside N's square root"},
        {.path = "x", .type = KeyType::number_list, .default_value = Json::parse("[1,-1,2]"),
         .help = "the residual stream input"},
        {.path = "ablate", .type = KeyType::integer, .default_value = 4, .min = 1.0,
         .help = "hidden unit zeroed after the activation (1-based)"},
        {.path = "readout", .type = KeyType::number_list, .default_value = Json::parse("[0,0,1]"),
         .help = "q of the linear score s = q.y"},
    };
    return {.name = "residual_ablation",
            .description = "doc 003's hand-built residual MLP: forward, unit ablation, readout shortcut",
            .schema = std::move(schema),
            .headlines = {{"forward", {"quantity", "value"}}, {"contributions", {"term", "h_j", "writes"}}, {"readout", {"unit", "predicted_change", "recomputed_change", "abs_difference"}}},
            .run = by_dtype<compute<float>, compute<double>>,
            .random = false};
}

}  // namespace ffn::experiments::residual_ablation
