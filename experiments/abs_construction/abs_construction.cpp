// abs_construction: doc 000's exact 2-4-2 ReLU network computing
// (|x1|, |x2|) (claims X1). Forward values at the worked input, the same net
// without its activation, local Jacobians and their ranks, and errors over a
// grid of inputs, all computed through nn::MLP.
#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "analysis/jacobian.h"
#include "analysis/rank.h"
#include "experiments/support/run.h"
#include "report/text.h"
#include "nn/mlp.h"
#include "runner/experiment.h"

namespace ffn::experiments::abs_construction {

namespace {

using report::ColumnType;

// abs(t) is not affine (claim X6): the least-squares line through |t| on a
// point set, from the normal equations, beside the two-unit construction
// relu(t) + relu(-t) evaluated as an nn::MLP 1-2-1.
template <class T>
report::Table affine_fit() {
    nn::MLP<T> pair({1, 2, 1}, nn::Activation::relu);
    pair.layers[0].weight = nn::Matrix<T>{{T(1)}, {T(-1)}};
    pair.layers[0].bias = nn::Vector<T>{T(0), T(0)};
    pair.layers[1].weight = nn::Matrix<T>{{T(1), T(1)}};
    pair.layers[1].bias = nn::Vector<T>{T(0)};
    report::Table t("affine_fit");
    t.add_column("points", ColumnType::text).add_key("points");
    t.add_column("slope", ColumnType::real, 9)
        .add_column("intercept", ColumnType::real, 9)
        .add_column("max_abs_residual", ColumnType::real, 9)
        .add_column("rmse", ColumnType::real, 9)
        .add_column("relu_pair_max_error", ColumnType::real, 3);
    std::vector<double> grid(400);
    for (std::size_t i = 0; i < grid.size(); ++i) grid[i] = -2.0 + 4.0 * static_cast<double>(i) / 399.0;
    // The fit's arithmetic in the run's dtype, so that a float32 row shows
    // float32 numbers.
    for (const auto& [name, ts] : {std::pair<std::string, std::vector<double>>{"t = -1, 0, 1", {-1.0, 0.0, 1.0}},
                                   std::pair<std::string, std::vector<double>>{"400 points on [-2, 2]", grid}}) {
        T n = 0, st = 0, stt = 0, sy = 0, sty = 0;
        for (double v : ts) {
            const T x = static_cast<T>(v);
            n += 1, st += x, stt += x * x, sy += std::abs(x), sty += x * std::abs(x);
        }
        const T det = n * stt - st * st;
        const T slope = (n * sty - st * sy) / det, intercept = (stt * sy - st * sty) / det;
        T worst = 0, ss = 0;
        nn::Matrix<T> X = nn::Matrix<T>::from_shape({ts.size(), std::size_t{1}});
        for (std::size_t i = 0; i < ts.size(); ++i) {
            X(i, 0) = static_cast<T>(ts[i]);
            const T r = slope * X(i, 0) + intercept - std::abs(X(i, 0));
            worst = std::max(worst, std::abs(r));
            ss += r * r;
        }
        const nn::Matrix<T> Y = pair.forward(X);
        double pair_error = 0;
        for (std::size_t i = 0; i < ts.size(); ++i)
            pair_error = std::max(pair_error, std::fabs(static_cast<double>(Y(i, 0)) - std::fabs(static_cast<double>(X(i, 0)))));
        t.add_row({name, static_cast<double>(slope), static_cast<double>(intercept), static_cast<double>(worst),
                   static_cast<double>(std::sqrt(ss / n)), pair_error});
    }
    return t;
}

template <class T>
struct AbsNet {
    nn::MLP<T> net;
    nn::MLP<T> linear;  // the same weights, activation removed
    nn::Matrix<T> reconstruction;
};

template <class T>
AbsNet<T> build(const runner::Run& run) {
    const auto A = run.matrix("A"), B = run.matrix("B"), R = run.matrix("reconstruction");
    const auto a = run.numbers("a"), b = run.numbers("b");
    const std::size_t m = A.size(), d = A[0].size();
    require_shape("B", B.size(), B[0].size(), d, m, "B maps the hidden layer back to the input width");
    require_length("a", a.size(), m, "one bias per row of A");
    require_length("b", b.size(), d, "one bias per row of B");
    require_shape("reconstruction", R.size(), R[0].size(), d, m, "it maps h back to x");
    require_length("x", run.numbers("x").size(), d, "the input width");
    const auto act = nn::parse_activation(run.string("activation"));
    AbsNet<T> n{nn::MLP<T>({d, m, d}, act), nn::MLP<T>({d, m, d}, nn::Activation::identity), nn::to_matrix<T>(R)};
    for (auto* mlp : {&n.net, &n.linear}) {
        mlp->layers[0].weight = nn::to_matrix<T>(A);
        mlp->layers[0].bias = nn::to_vector<T>(a);
        mlp->layers[1].weight = nn::to_matrix<T>(B);
        mlp->layers[1].bias = nn::to_vector<T>(b);
    }
    return n;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    AbsNet<T> n = build<T>(run);
    const std::size_t d = n.net.layers[0].in_features();

    // Worked example at x.
    const nn::Matrix<T> X = nn::as_row(nn::to_vector<T>(run.numbers("x")));
    nn::Matrix<T> h;
    const nn::Matrix<T> y = n.net.forward_with_hook(X, [&](std::size_t, nn::Matrix<T>& hidden) { h = hidden; });
    const nn::Matrix<T> z = nn::apply(n.net.layers[0], X);
    const nn::Matrix<T> y_linear = n.linear.forward_with_hook(X);
    const auto& A = n.net.layers[0].weight;
    const auto& B = n.net.layers[1].weight;
    // B A through the layer's own product: feeding the rows of A^T through a
    // bias-free layer with weight B gives A^T B^T = (B A)^T.
    nn::Linear<T> by_B(B.shape()[1], B.shape()[0], /*bias=*/false);
    by_B.weight = B;
    const nn::Matrix<T> BA = xt::transpose(nn::apply(by_B, xt::eval(xt::transpose(A))));
    nn::Linear<T> reconstruct(n.reconstruction.shape()[1], d, false);
    reconstruct.weight = n.reconstruction;
    const nn::Matrix<T> x_back = nn::apply(reconstruct, h);

    report::Table worked("worked_example");
    worked.add_column("quantity", ColumnType::text).add_column("value", ColumnType::text).add_key("quantity");
    worked.add_row({std::string("x"), report::vector_text(nn::row_of(X))});
    worked.add_row({std::string("Ax+a"), report::vector_text(nn::row_of(z))});
    worked.add_row({std::string("h"), report::vector_text(nn::row_of(h))});
    worked.add_row({std::string("y"), report::vector_text(nn::row_of(y))});
    worked.add_row({std::string("y without activation"), report::vector_text(nn::row_of(y_linear))});
    worked.add_row({std::string("BA"), report::matrix_text(BA)});
    worked.add_row({std::string("x from h (reconstruction)"), report::vector_text(nn::row_of(x_back))});
    worked.add_row({std::string("matrix entries"), std::to_string(A.size() + B.size())});
    worked.add_row({std::string("bias slots"),
                    std::to_string(n.net.layers[0].bias.size() + n.net.layers[1].bias.size())});

    // Jacobians at sample points (away from zero pre-activations).
    report::Table jac("jacobian");
    jac.add_column("point", ColumnType::text)
        .add_column("active_units", ColumnType::text)
        .add_column("J", ColumnType::text)
        .add_column("rank", ColumnType::integer)
        .add_column("rank_bound_d", ColumnType::integer)
        .add_key("point");
    for (const auto& p : run.matrix("jacobian_points")) {
        require_length("jacobian_points", p.size(), d, "points are inputs");
        const nn::Vector<T> x = nn::to_vector<T>(p);
        const nn::Matrix<T> pre = nn::apply(n.net.layers[0], nn::as_row(x));
        std::string active;
        for (std::size_t j = 0; j < pre.shape()[1]; ++j) active += pre(0, j) > T(0) ? '1' : '0';
        const nn::Matrix<T> J = analysis::mlp_jacobian(n.net, x);
        jac.add_row({report::vector_text(x), active, report::matrix_text(J),
                     static_cast<std::int64_t>(analysis::matrix_rank_of(J).rank), static_cast<std::int64_t>(d)});
    }

    // Over a grid: how far y is from |x|, how far the linear net is from 0,
    // and how well h gives x back.
    const auto lo = run.number("grid.lo"), hi = run.number("grid.hi");
    const auto points = static_cast<std::size_t>(run.integer("grid.points"));
    if (d != 2) throw Error("key 'A': the grid check covers two-dimensional inputs (A must have 2 columns)");
    nn::Matrix<T> G = nn::Matrix<T>::from_shape({points * points, d});
    for (std::size_t i = 0; i < points; ++i)
        for (std::size_t j = 0; j < points; ++j) {
            G(i * points + j, 0) = static_cast<T>(lo + (hi - lo) * static_cast<double>(i) / static_cast<double>(points - 1));
            G(i * points + j, 1) = static_cast<T>(lo + (hi - lo) * static_cast<double>(j) / static_cast<double>(points - 1));
        }
    nn::Matrix<T> H;
    const nn::Matrix<T> Y = n.net.forward_with_hook(G, [&](std::size_t, nn::Matrix<T>& hidden) { H = hidden; });
    const nn::Matrix<T> Y_linear = n.linear.forward_with_hook(G);
    const nn::Matrix<T> G_back = nn::apply(reconstruct, H);
    report::Table grid("grid");
    grid.add_column("inputs", ColumnType::integer)
        .add_column("max_abs_error_vs_abs", ColumnType::real, 3)
        .add_column("max_abs_without_activation", ColumnType::real, 3)
        .add_column("max_reconstruction_error", ColumnType::real, 3);
    grid.add_row({static_cast<std::int64_t>(G.shape()[0]), static_cast<double>(xt::amax(xt::abs(Y - xt::abs(G)))()),
                  static_cast<double>(xt::amax(xt::abs(Y_linear))()),
                  static_cast<double>(xt::amax(xt::abs(G_back - G))())});
    return {worked, jac, grid, affine_fit<T>()};
}


}  // namespace

runner::ExperimentKind make() {
    using runner::Json;
    using runner::KeyType;
    runner::Schema schema{
        {.path = "A", .type = KeyType::matrix, .default_value = Json::parse("[[1,0],[-1,0],[0,1],[0,-1]]"),
         .help = "input weights, m x d"},
        {.path = "a", .type = KeyType::number_list, .default_value = Json::parse("[0,0,0,0]"), .help = "input bias, m"},
        {.path = "B", .type = KeyType::matrix, .default_value = Json::parse("[[1,1,0,0],[0,0,1,1]]"),
         .help = "output weights, d x m"},
        {.path = "b", .type = KeyType::number_list, .default_value = Json::parse("[0,0]"), .help = "output bias, d"},
        {.path = "activation", .type = KeyType::string, .default_value = "relu", .choices = nn::activation_names(),
         .help = "identity shows the collapse directly"},
        {.path = "x", .type = KeyType::number_list, .default_value = Json::parse("[-2,3]"), .help = "the worked input"},
        {.path = "reconstruction", .type = KeyType::matrix, .default_value = Json::parse("[[1,-1,0,0],[0,0,1,-1]]"),
         .help = "linear map from h back to x"},
        {.path = "jacobian_points", .type = KeyType::matrix, .default_value = Json::parse("[[-2,3],[1,1],[-1,-1],[2,-0.5]]"),
         .help = "inputs at which the Jacobian is taken"},
        {.path = "grid.lo", .type = KeyType::number, .default_value = -3.0,
         .help = "the square grid's low end, both axes"},
        {.path = "grid.hi", .type = KeyType::number, .default_value = 3.0, .help = "its high end"},
        {.path = "grid.points", .type = KeyType::integer, .default_value = 61, .min = 2.0, .max = 2001.0,
         .help = "per axis"},
    };
    return {.name = "abs_construction",
            .description = "doc 000's exact 2-4-2 ReLU net for |x|: forward, no-ReLU collapse, Jacobian rank",
            .schema = std::move(schema),
            .headlines = {{"worked_example", {"quantity", "value"}}, {"grid", {"inputs", "max_abs_error_vs_abs", "max_abs_without_activation", "max_reconstruction_error"}}, {"jacobian", {"point", "active_units", "rank"}}, {"affine_fit", {"points", "max_abs_residual", "relu_pair_max_error"}}},
            .run = by_dtype<compute<float>, compute<double>>,
            .random = false};
}

}  // namespace ffn::experiments::abs_construction
