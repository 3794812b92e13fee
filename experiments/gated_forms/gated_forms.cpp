// gated_forms: doc 004's reading of the gated MLP as a symmetry-broken
// rank-1 bilinear attention (claims N4, N5, N6), through the library's own
// MLP, BilinearMLP and GatedMLP.
//   bilinear  act((x Q^T) * (x K^T)) V     unchanged by q_j -> a q_j,
//                                          k_j -> k_j / a and by q <-> k
//   gated     (act(x Q^T) * (x K^T)) V     (Q the gate): both broken, but
//                                          relu keeps the positive scaling
// Tables: the absorption identities (N4) with the storage each form needs
// at d = 768, d_ff = 3072; the symmetry table on a random instance (N5);
// the same on the hand-built example x = (1, -1), q = (2, 1), k = (1, 3),
// v = 1 (N6).
#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <span>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/rng.h"
#include "experiments/support/run.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "nn/tensor.h"
#include "runner/experiment.h"

namespace ffn::experiments::gated_forms {

namespace {

using nn::Activation;
using report::Cell;
using report::ColumnType;

const std::vector<Activation> kActivations = {Activation::relu, Activation::gelu, Activation::silu, Activation::identity};
const std::vector<std::string> kTransformations = {"scale 2", "scale -1", "per-unit scale", "swap q and k", "k-v scale 2",
                                                   "k-v scale -1"};

// Which (form, activation, transformation) leave the output unchanged,
// derived from where each form applies its activation. The q-k
// transformations (scale q_j by a and k_j by 1/a, or swap them) keep the
// product (x q_j)(x k_j): the bilinear form, which activates that product,
// is unchanged for every activation (doc 004); the gated form activates
// x q_j alone, so it is unchanged under a positive scaling when the
// activation is positively homogeneous (relu, identity), and under a
// negative one or the swap only when it is linear. The k-v rescaling
// (k_j by c, the down-projection's column v_j by 1/c) is the reverse: the
// gated form's k_j sits outside the activation, so c cancels for every
// activation, while the bilinear form's k_j is inside it, unchanged for
// c > 0 only when positively homogeneous, for c < 0 only when linear.
bool unchanged_in_theory(const std::string& form, Activation act, const std::string& how) {
    const bool linear = act == Activation::identity;
    const bool positively_homogeneous = linear || act == Activation::relu;
    const bool kv = how.starts_with("k-v");
    const bool positive = how == "scale 2" || how == "per-unit scale" || how == "k-v scale 2";
    // The form whose activation the transformed weight does not enter.
    const bool outside = kv ? form == "gated" : form == "bilinear";
    if (outside) return true;
    return positive ? positively_homogeneous : linear;
}

// The query and key weights of a form: BilinearMLP's q[0], k[0]; GatedMLP's
// gate (the activated branch) and up.
// v: the down-projection, whose column j is unit j's value vector.
template <class T>
struct Pair {
    nn::Matrix<T>& q;
    nn::Matrix<T>& k;
    nn::Matrix<T>& v;
};
template <class T>
Pair<T> pair_of(nn::BilinearMLP<T>& f) { return {f.q[0].weight, f.k[0].weight, f.down.weight}; }
template <class T>
Pair<T> pair_of(nn::GatedMLP<T>& f) { return {f.gate.weight, f.up.weight, f.down.weight}; }

// Applies a transformation to each unit j's (q_j, k_j): rows of q and k.
template <class T>
void transform(Pair<T> p, const std::string& how, Rng& rng) {
    const std::size_t m = p.q.shape()[0], d = p.q.shape()[1];
    for (std::size_t j = 0; j < m; ++j) {
        if (how == "swap q and k") {
            for (std::size_t i = 0; i < d; ++i) std::swap(p.q(j, i), p.k(j, i));
            continue;
        }
        if (how.starts_with("k-v scale")) {
            const double c = how == "k-v scale 2" ? 2.0 : -1.0;
            for (std::size_t i = 0; i < d; ++i) p.k(j, i) = static_cast<T>(c * static_cast<double>(p.k(j, i)));
            for (std::size_t o = 0; o < p.v.shape()[0]; ++o) p.v(o, j) = static_cast<T>(static_cast<double>(p.v(o, j)) / c);
            continue;
        }
        const double a = how == "scale 2" ? 2.0 : how == "scale -1" ? -1.0 : rng.uniform(0.5, 2.0);
        for (std::size_t i = 0; i < d; ++i) {
            p.q(j, i) = static_cast<T>(a * static_cast<double>(p.q(j, i)));
            p.k(j, i) = static_cast<T>(static_cast<double>(p.k(j, i)) / a);
        }
    }
}

// The largest change of `form`'s output on X when its pairs are transformed.
template <class T, class Form>
double change_under(Form form, const nn::Matrix<T>& X, const std::string& how, Rng& rng) {
    const nn::Matrix<T> before = form.forward(X);
    transform(pair_of(form), how, rng);
    return nn::max_abs_difference(form.forward(X), before);
}

report::Table symmetry_columns(const std::string& name) {
    report::Table t(name);
    t.add_column("form", ColumnType::text)
        .add_column("activation", ColumnType::text)
        .add_column("transformation", ColumnType::text)
        .add_column("output", ColumnType::real)
        .add_column("max_abs_change", ColumnType::real, 3)
        .add_column("relative_change", ColumnType::real, 3)
        .add_column("unchanged", ColumnType::boolean)
        .add_column("unchanged_in_theory", ColumnType::boolean)
        .add_column("agrees", ColumnType::boolean);
    for (const char* key : {"form", "activation", "transformation"}) t.add_key(key);
    return t;
}

// Every (form, activation, transformation) on X, the forms' weights set by
// `setup(form)`; "unchanged" means to rounding (the identity bound).
template <class T, class Setup>
void symmetry_rows(report::Table& t, const nn::Matrix<T>& X, std::size_t d, std::size_t m, bool float64,
                   const std::vector<std::string>& transformations, Setup setup, std::uint64_t seed) {
    for (const std::string form_name : {"bilinear", "gated"})
        for (const Activation act : kActivations)
            for (const std::string& how : transformations) {
                Rng rng = Rng::stream(seed, fnv1a64(form_name + " " + how), "transformation");
                double change = 0, scale = 0, output = 0;
                auto measure = [&](auto form) {
                    setup(pair_of(form), form.down.weight);
                    const nn::Matrix<T> y = form.forward(X);
                    scale = std::max(nn::max_abs(y), 1e-300);
                    output = static_cast<double>(y(0, 0));
                    change = change_under<T>(form, X, how, rng);
                };
                if (form_name == "bilinear") measure(nn::BilinearMLP<T>(d, m, 1, act));
                else measure(nn::GatedMLP<T>(d, m, act));
                const bool unchanged = change / scale < identity_tolerance(float64);
                const bool theory = unchanged_in_theory(form_name, act, how);
                // Relative to an output of 0 (the bilinear relu unit of the hand
                // example is cut off) there is no relative change: left empty.
                const Cell relative = scale > 1e-300 ? Cell{change / scale} : Cell{};
                t.add_row({form_name, std::string(nn::to_string(act)), how, output, change, relative, unchanged, theory,
                           unchanged == theory});
            }
}

// A B^T through the library's Linear (and so the gemm core).
template <class T>
nn::Matrix<T> times_transposed(const nn::Matrix<T>& A, const nn::Matrix<T>& B) {
    nn::Linear<T> l(B.shape()[1], B.shape()[0], false);
    l.weight = B;
    return nn::apply(l, A);
}

template <class T>
nn::Matrix<T> normal_matrix(std::size_t rows, std::size_t cols, Rng& rng, double scale) {
    nn::Matrix<T> M = nn::Matrix<T>::from_shape({rows, cols});
    for (auto& x : M) x = static_cast<T>(rng.normal(0, scale));
    return M;
}

// N4: each identity's two sides, one through an nn module, the other as
// the document writes it.
template <class T>
report::Table absorption(const runner::Run& run, const nn::Matrix<T>& X, Rng& rng) {
    const auto d = X.shape()[1], tokens = X.shape()[0];
    const auto m = static_cast<std::size_t>(run.integer("m")), R = static_cast<std::size_t>(run.integer("rank"));
    const Activation act = nn::parse_activation(run.string("activation"));
    const double w = 1 / std::sqrt(static_cast<double>(d));
    report::Table t("absorption");
    t.add_column("identity", ColumnType::text).add_key("identity");
    t.add_column("activation", ColumnType::text)
        .add_column("max_abs", ColumnType::real, 3)
        .add_column("relative", ColumnType::real, 3)
        .add_column("agrees", ColumnType::boolean);
    auto add = [&](const std::string& name, const nn::Matrix<T>& module_side, const nn::Matrix<T>& document_side) {
        const double diff = nn::max_abs_difference(module_side, document_side);
        const double rel = diff / std::max(nn::max_abs(document_side), 1e-300);
        t.add_row({name, std::string(nn::to_string(act)), diff, rel, rel < identity_tolerance(run.is_float64())});
    };
    const nn::Matrix<T> V = normal_matrix<T>(d, m, rng, w);  // column j is v_j
    auto activated = [&](nn::Matrix<T> z) {
        nn::activate_inplace<T>(act, std::span<T>(z.data(), z.size()));
        return z;
    };
    {   // act(x Q K^T) V is the MLP with W1 = K Q^T.
        const nn::Matrix<T> Q = normal_matrix<T>(d, d, rng, w), K = normal_matrix<T>(m, d, rng, w);
        const nn::Matrix<T> Qt = xt::transpose(Q);
        nn::MLP<T> mlp({d, m, d}, act, false);
        mlp.layers[0].weight = times_transposed(K, Q);
        mlp.layers[1].weight = V;
        add("single Q: act(x Q K^T) V = MLP with W1 = K Q^T", mlp.forward(X),
            times_transposed(activated(times_transposed(times_transposed(X, Qt), K)), V));
    }
    {   // sum_j act(x Q_j k_j^T) v_j is the MLP whose W1 row j is k_j Q_j^T.
        const nn::Matrix<T> K = normal_matrix<T>(m, d, rng, w);
        std::vector<nn::Matrix<T>> Qs;
        for (std::size_t j = 0; j < m; ++j) Qs.push_back(normal_matrix<T>(d, d, rng, w));
        nn::MLP<T> mlp({d, m, d}, act, false);
        nn::Matrix<T> terms = nn::Matrix<T>::from_shape({tokens, d});
        std::fill(terms.begin(), terms.end(), T(0));
        for (std::size_t j = 0; j < m; ++j) {
            for (std::size_t i = 0; i < d; ++i) {  // (Q_j k_j^T)_i
                T s = 0;
                for (std::size_t c = 0; c < d; ++c) s += Qs[j](i, c) * K(j, c);
                mlp.layers[0].weight(j, i) = s;
            }
            for (std::size_t n = 0; n < tokens; ++n) {  // act(x Q_j k_j^T) v_j, term by term
                T score = 0;
                for (std::size_t i = 0; i < d; ++i) score += X(n, i) * mlp.layers[0].weight(j, i);
                const T a = nn::activate(act, score);
                for (std::size_t o = 0; o < d; ++o) terms(n, o) += a * V(o, j);
            }
        }
        mlp.layers[1].weight = V;
        add("per-pair Q_j: sum_j act(x Q_j k_j^T) v_j = MLP with W1 rows k_j Q_j^T", mlp.forward(X), terms);
    }
    // Rank 1 and rank R: BilinearMLP against sum_j act(x M_j x^T) v_j with
    // M_j = sum_r q_jr^T k_jr, the full d x d form.
    for (const std::size_t rank : {std::size_t{1}, R}) {
        nn::BilinearMLP<T> bilinear(d, m, rank, act);
        for (std::size_t r = 0; r < rank; ++r) {
            bilinear.q[r].weight = normal_matrix<T>(m, d, rng, w);
            bilinear.k[r].weight = normal_matrix<T>(m, d, rng, w);
        }
        bilinear.down.weight = V;
        nn::Matrix<T> terms = nn::Matrix<T>::from_shape({tokens, d});
        std::fill(terms.begin(), terms.end(), T(0));
        for (std::size_t j = 0; j < m; ++j) {
            nn::Matrix<T> M = nn::Matrix<T>::from_shape({d, d});
            std::fill(M.begin(), M.end(), T(0));
            for (std::size_t r = 0; r < rank; ++r)
                for (std::size_t a = 0; a < d; ++a)
                    for (std::size_t b = 0; b < d; ++b) M(a, b) += bilinear.q[r].weight(j, a) * bilinear.k[r].weight(j, b);
            for (std::size_t n = 0; n < tokens; ++n) {
                T s = 0;
                for (std::size_t a = 0; a < d; ++a)
                    for (std::size_t b = 0; b < d; ++b) s += X(n, a) * M(a, b) * X(n, b);
                const T h = nn::activate(act, s);
                for (std::size_t o = 0; o < d; ++o) terms(n, o) += h * V(o, j);
            }
        }
        add(fmt::format("rank {}: act(sum_r (x Q_r^T) * (x K_r^T)) V = sum_j act(x M_j x^T) v_j", rank), bilinear.forward(X),
            terms);
    }
    return t;
}

// What each form stores at d = 768, d_ff = 3072: the module forms counted
// from instantiated layers, the per-pair tensors (too large to build) by
// their sizes.
report::Table storage(std::int64_t R) {
    constexpr std::int64_t d = 768, dff = 3072;
    auto count = [](auto&& module) {
        std::int64_t n = 0;
        for (const auto& p : module.parameters()) n += static_cast<std::int64_t>(p.size());
        return n;
    };
    report::Table t("storage");
    t.add_column("form", ColumnType::text).add_column("d", ColumnType::integer).add_column("d_ff", ColumnType::integer);
    t.add_key("form");
    t.add_column("parameters", ColumnType::integer).add_column("how", ColumnType::text);
    auto row = [&](const std::string& form, std::int64_t n, const char* how) { t.add_row({form, d, dff, n, std::string(how)}); };
    row("MLP, W1 and W2", count(nn::MLP<float>({d, dff, d}, Activation::relu, false)), "instantiated");
    row("single query matrix Q, before absorbing", d * d + 2 * d * dff, "d^2 + 2 d d_ff");
    row("per-pair Q_j, before absorbing", dff * d * d + 2 * d * dff, "d_ff d^2 + 2 d d_ff");
    row("full bilinear, per-pair Q_j and K_j", 2 * dff * d * d + d * dff, "2 d_ff d^2 + d d_ff");
    row("rank-1 bilinear", count(nn::BilinearMLP<float>(d, dff, 1, Activation::relu)), "instantiated");
    row(fmt::format("rank-{} bilinear", R), count(nn::BilinearMLP<float>(d, dff, static_cast<std::size_t>(R), Activation::relu)),
        "instantiated");
    row("gated MLP", count(nn::GatedMLP<float>(d, dff, Activation::relu)), "instantiated");
    return t;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const auto d = static_cast<std::size_t>(run.integer("d")), m = static_cast<std::size_t>(run.integer("m"));
    const auto tokens = static_cast<std::size_t>(run.integer("tokens"));
    Rng rng = Rng::stream(run.seed, fnv1a64(fmt::format("d={} m={}", d, m)), "weights");
    const nn::Matrix<T> X = normal_matrix<T>(tokens, d, rng, 1.0);

    // N5: a random instance, the same weights for every activation.
    report::Table random = symmetry_columns("symmetry");
    const std::uint64_t weights_key = rng.next_u64();
    symmetry_rows<T>(random, X, d, m, run.is_float64(), kTransformations,
                     [&](Pair<T> p, nn::Matrix<T>& down) {
                         Rng wr(weights_key);
                         const double w = 1 / std::sqrt(static_cast<double>(d));
                         p.q = normal_matrix<T>(m, d, wr, w);
                         p.k = normal_matrix<T>(m, d, wr, w);
                         down = normal_matrix<T>(d, m, wr, 1 / std::sqrt(static_cast<double>(m)));
                     },
                     run.seed);

    // N6: x = (1, -1), q = (2, 1), k = (1, 3), v = 1 (output coordinate 0).
    report::Table hand = symmetry_columns("hand");
    nn::Matrix<T> x = nn::Matrix<T>::from_shape({1, 2});
    x(0, 0) = 1;
    x(0, 1) = -1;
    symmetry_rows<T>(hand, x, 2, 1, run.is_float64(), {"scale 2", "scale -1", "swap q and k", "k-v scale 2", "k-v scale -1"},
                     [](Pair<T> p, nn::Matrix<T>& down) {
                         p.q(0, 0) = 2, p.q(0, 1) = 1;
                         p.k(0, 0) = 1, p.k(0, 1) = 3;
                         down(0, 0) = 1, down(1, 0) = 0;
                     },
                     run.seed);
    return {absorption<T>(run, X, rng), storage(run.integer("rank")), random, hand};
}


}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    // The document's sides are written out term by term (tokens x m x d^2 x
    // rank work, m d^2 numbers for the per-unit Q_j): sizes for identities,
    // not for scale, so that no setting runs for minutes or needs gigabytes.
    schema.add({.path = "d", .type = KeyType::integer, .default_value = 16, .min = 1.0, .max = 64.0, .help = "model width"});
    schema.add({.path = "m", .type = KeyType::integer, .default_value = 32, .min = 1.0, .max = 256.0, .help = "hidden width d_ff"});
    schema.add({.path = "tokens", .type = KeyType::integer, .default_value = 10, .min = 1.0, .max = 1000.0, .help = "N(0,1) input tokens"});
    schema.add({.path = "rank", .type = KeyType::integer, .default_value = 3, .min = 1.0, .max = 8.0,
                .help = "R of the rank-R bilinear form"});
    schema.add({.path = "activation", .type = KeyType::string, .default_value = "gelu", .choices = nn::activation_names(),
                .help = "the activation of the absorption identities"});
    return {.name = "gated_forms",
            .description = "gated MLPs as symmetry-broken rank-1 bilinear forms: absorption, storage, symmetries",
            .schema = std::move(schema),
            .headlines = {{"absorption", {"identity", "activation", "relative", "agrees"}}, {"storage", {"form", "parameters", "how"}}, {"symmetry", {"form", "activation", "transformation", "relative_change", "unchanged", "unchanged_in_theory", "agrees"}}, {"hand", {"form", "activation", "transformation", "relative_change", "unchanged", "unchanged_in_theory", "agrees"}}},
            .run = by_dtype<compute<float>, compute<double>>};
}

}  // namespace ffn::experiments::gated_forms
