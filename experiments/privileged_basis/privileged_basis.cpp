// privileged_basis: doc 003's point that an MLP's hidden axes are special
// (claim X12). A coordinatewise ReLU commutes with permutations and positive
// diagonal scalings of its input, and with nothing else in general: not
// with rotations, not with negative scalings. First the 45-degree rotation
// of (1, -1) by hand; then random d x d matrices of each kind against many
// inputs; then a whole MLP whose hidden layer is reparametrised by M
// (W_in -> M W_in, b_in -> M b_in, W_out -> W_out M^-1): the output moves
// only by rounding when M commutes with the activation.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "experiments/support/ffn.h"
#include "runner/experiment.h"

namespace ffn::experiments::privileged_basis {

namespace {

using report::Cell;
using report::ColumnType;
using Dense = std::vector<std::vector<double>>;  // row-major n x n

const std::vector<std::string> kKinds = {"permutation", "positive_diagonal", "negative_diagonal", "rotation"};

// M and its inverse, both exact but for the rotation's inverse, its
// transpose (orthogonal to rounding).
struct Transform {
    Dense M, inverse;
};

Dense zeros(std::size_t n) { return Dense(n, std::vector<double>(n, 0.0)); }

Dense transpose(const Dense& A) {
    Dense T = zeros(A.size());
    for (std::size_t i = 0; i < A.size(); ++i)
        for (std::size_t j = 0; j < A.size(); ++j) T[j][i] = A[i][j];
    return T;
}

// Q of a Gaussian matrix's QR, by modified Gram-Schmidt run twice (the
// second pass restores orthogonality to rounding): a random rotation
// (or reflection; either breaks ReLU's commutation alike).
Dense random_orthogonal(std::size_t n, Rng& rng) {
    Dense cols = zeros(n);  // cols[k] is column k
    for (auto& c : cols)
        for (double& x : c) x = rng.normal();
    for (std::size_t k = 0; k < n; ++k)
        for (int pass = 0; pass < 2; ++pass) {
            for (std::size_t j = 0; j < k; ++j) {
                const double dot = std::inner_product(cols[k].begin(), cols[k].end(), cols[j].begin(), 0.0);
                for (std::size_t i = 0; i < n; ++i) cols[k][i] -= dot * cols[j][i];
            }
            const double norm = std::sqrt(std::inner_product(cols[k].begin(), cols[k].end(), cols[k].begin(), 0.0));
            for (double& x : cols[k]) x /= norm;
        }
    return transpose(cols);  // rows of the transpose of the column list: M[i][k] = cols[k][i]
}

Transform make_transform(const std::string& kind, std::size_t n, Rng& rng) {
    Transform t{zeros(n), zeros(n)};
    if (kind == "permutation") {
        std::vector<std::size_t> to(n);
        std::iota(to.begin(), to.end(), std::size_t{0});
        rng.shuffle(to);
        for (std::size_t i = 0; i < n; ++i) t.M[i][to[i]] = t.inverse[to[i]][i] = 1;
    } else if (kind == "rotation") {
        t.M = random_orthogonal(n, rng);
        t.inverse = transpose(t.M);
    } else {
        const double sign = kind == "positive_diagonal" ? 1 : -1;
        for (std::size_t i = 0; i < n; ++i) {
            t.M[i][i] = sign * rng.uniform(0.5, 2.0);
            t.inverse[i][i] = 1 / t.M[i][i];
        }
    }
    return t;
}

// y = A x in T, summing j in increasing order.
template <class T>
std::vector<T> multiply(const Dense& A, const std::vector<T>& x) {
    std::vector<T> y(A.size(), T(0));
    for (std::size_t i = 0; i < A.size(); ++i)
        for (std::size_t j = 0; j < x.size(); ++j) y[i] += static_cast<T>(A[i][j]) * x[j];
    return y;
}

template <class T>
std::vector<T> relu(std::vector<T> x) {
    for (T& v : x) v = nn::activate(nn::Activation::relu, v);
    return x;
}

// The 45-degree rotation of (1, -1), step by step, in T.
template <class T>
report::Table by_hand() {
    const double c = 1 / std::sqrt(2.0);
    const Dense R = {{c, -c}, {c, c}};
    const std::vector<T> x = {1, -1};
    const auto rx = multiply(R, x), relu_rx = relu(rx), relu_x = relu(x), r_relu_x = multiply(R, relu_x);
    report::Table t("by_hand");
    t.add_column("step", ColumnType::text).add_column("v_1", ColumnType::real).add_column("v_2", ColumnType::real);
    t.add_key("step");
    auto row = [&](const char* step, T a, T b) { t.add_row({std::string(step), static_cast<double>(a), static_cast<double>(b)}); };
    row("x", x[0], x[1]);
    row("R x", rx[0], rx[1]);
    row("relu(R x)", relu_rx[0], relu_rx[1]);
    row("relu(x)", relu_x[0], relu_x[1]);
    row("R relu(x)", r_relu_x[0], r_relu_x[1]);
    row("relu(R x) - R relu(x)", relu_rx[0] - r_relu_x[0], relu_rx[1] - r_relu_x[1]);
    return t;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    Ffn<T> ffn = make_ffn<T>(run, {.d = 64, .m = 256, .tokens = 100});
    const std::size_t d = ffn.d, m = ffn.m, tokens = ffn.tokens;
    report::Table commutes("commutes");
    commutes.add_column("kind", ColumnType::text)
        .add_column("d", ColumnType::integer)
        .add_column("inputs", ColumnType::integer)
        .add_column("max_abs_difference", ColumnType::real, 3)
        .add_column("exactly_zero", ColumnType::boolean);
    commutes.add_key("kind");
    report::Table reparam("mlp");
    reparam.add_column("kind", ColumnType::text)
        .add_column("d", ColumnType::integer)
        .add_column("m", ColumnType::integer)
        .add_column("tokens", ColumnType::integer)
        .add_column("activation", ColumnType::text)
        .add_column("max_abs_change", ColumnType::real, 3)
        .add_column("relative_change", ColumnType::real, 3)
        .add_column("unchanged_to_rounding", ColumnType::boolean);
    reparam.add_key("kind");
    const nn::Matrix<T> before = ffn.mlp.forward_with_hook(ffn.inputs);
    for (const std::string& kind : kKinds) {
        // One stream per kind and size: adding a kind keeps the others' draws.
        Rng rng = Rng::stream(run.seed, fnv1a64(fmt::format("kind={} d={}", kind, d)), "transform");
        const Transform small = make_transform(kind, d, rng);
        double worst = 0;
        for (std::size_t r = 0; r < tokens; ++r) {
            const std::vector<T> x(ffn.inputs.data() + r * d, ffn.inputs.data() + (r + 1) * d);
            const auto a = relu(multiply(small.M, x)), b = multiply(small.M, relu(x));
            for (std::size_t i = 0; i < d; ++i) worst = std::max(worst, std::fabs(static_cast<double>(a[i] - b[i])));
        }
        commutes.add_row({kind, static_cast<std::int64_t>(d), static_cast<std::int64_t>(tokens), worst, worst == 0.0});

        Rng hidden_rng = Rng::stream(run.seed, fnv1a64(fmt::format("kind={} m={}", kind, m)), "transform");
        const Transform big = make_transform(kind, m, hidden_rng);
        nn::MLP<T> moved = ffn.mlp;
        auto& up = moved.layers[0];
        auto& down = moved.layers[1];
        const auto& up0 = ffn.mlp.layers[0];
        const auto& down0 = ffn.mlp.layers[1];
        for (std::size_t i = 0; i < m; ++i) {  // W_in -> M W_in, b_in -> M b_in, in double
            for (std::size_t k = 0; k < d; ++k) {
                double s = 0;
                for (std::size_t j = 0; j < m; ++j) s += big.M[i][j] * static_cast<double>(up0.weight(j, k));
                up.weight(i, k) = static_cast<T>(s);
            }
            double s = 0;
            for (std::size_t j = 0; j < m; ++j) s += big.M[i][j] * static_cast<double>(up0.bias(j));
            up.bias(i) = static_cast<T>(s);
        }
        for (std::size_t o = 0; o < d; ++o)  // W_out -> W_out M^-1
            for (std::size_t i = 0; i < m; ++i) {
                double s = 0;
                for (std::size_t j = 0; j < m; ++j) s += static_cast<double>(down0.weight(o, j)) * big.inverse[j][i];
                down.weight(o, i) = static_cast<T>(s);
            }
        const nn::Matrix<T> after = moved.forward_with_hook(ffn.inputs);
        const double change = nn::max_abs_difference(after, before);
        const double relative = change / std::max(nn::max_abs(before), 1e-300);
        reparam.add_row({kind, static_cast<std::int64_t>(d), static_cast<std::int64_t>(m), static_cast<std::int64_t>(tokens),
                         run.string("activation"), change, relative, relative < identity_tolerance(run.is_float64())});
    }
    return {by_hand<T>(), commutes, reparam};
}


}  // namespace

runner::ExperimentKind make() {
    runner::Schema schema;
    add_ffn_keys(schema, {.d = 64, .m = 256, .tokens = 100, .activation_help = "the activation the transforms meet"});
    return {.name = "privileged_basis",
            .description = "ReLU commutes with permutations and positive scalings, not rotations: by hand, on vectors, on an MLP",
            .schema = std::move(schema),
            .headlines = {{"commutes", {"kind", "max_abs_difference", "exactly_zero"}}, {"mlp", {"kind", "activation", "relative_change", "unchanged_to_rounding"}}},
            .keys_from_files = ffn_keys_from_files,
            .validate =
                [](const runner::Plan& plan) {
                    // The model and its reparametrised copy, and M, M^-1 and a
                    // d x d pair in double.
                    refuse_runs_beyond_memory(plan, {"d", "m", "tokens"}, [](const runner::Run& r) {
                        const double m = static_cast<double>(r.integer("m")), d = static_cast<double>(r.integer("d"));
                        return ffn_run_bytes(r) + 8.0 * (2 * m * m + 2 * d * d);
                    });
                },
            .run = by_dtype<compute<float>, compute<double>>};
}

}  // namespace ffn::experiments::privileged_basis
