// tokenwise: the FFN acts on each token alone (doc 001; claims N1). F of a
// batch against F of each row on its own, and F of a permuted batch against
// the permuted F, with numpy's allclose at the claims list's tolerances. The row-by-row
// products take another summation path through the gemm core (one-token
// products use its small path), so the differences are rounding, not zero.
#include <numeric>

#include "experiments/support/ffn.h"
#include "report/diff.h"
#include "runner/experiment.h"

namespace ffn::experiments::tokenwise {

namespace {

using report::ColumnType;

// Permutation equivariance needs two tokens at least.
const FfnKeys kKeys{.d = 64, .m = 256, .tokens = 10, .min_tokens = 2};

// numpy.allclose(a, b, rtol, atol): report::within everywhere, b the reference.
template <class T>
bool allclose(const nn::Matrix<T>& a, const nn::Matrix<T>& b, report::Tolerance tol) {
    for (std::size_t i = 0; i < a.size(); ++i)
        if (!report::within(a.data()[i], b.data()[i], tol)) return false;
    return true;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    Ffn<T> ffn = make_ffn<T>(run, kKeys);
    const std::size_t d = ffn.d, m = ffn.m, tokens = ffn.tokens;
    nn::MLP<T>& mlp = ffn.mlp;
    const nn::Matrix<T>& X = ffn.inputs;
    const nn::Matrix<T> batched = mlp.forward_with_hook(X);

    nn::Matrix<T> row_by_row = nn::Matrix<T>::from_shape({tokens, d});
    for (std::size_t r = 0; r < tokens; ++r)
        xt::view(row_by_row, r, xt::all()) = xt::view(mlp.forward_with_hook(nn::as_row(nn::row_of(X, r))), 0, xt::all());

    // A permutation from the run's own stream.
    std::vector<std::size_t> perm(tokens);
    std::iota(perm.begin(), perm.end(), std::size_t{0});
    Rng::stream(run.seed, fnv1a64("perm"), "data").shuffle(perm);
    nn::Matrix<T> X_perm = X, F_perm_rows = batched;
    for (std::size_t r = 0; r < tokens; ++r) {
        xt::view(X_perm, r, xt::all()) = xt::view(X, perm[r], xt::all());
        xt::view(F_perm_rows, r, xt::all()) = xt::view(batched, perm[r], xt::all());
    }
    const nn::Matrix<T> F_of_perm = mlp.forward_with_hook(X_perm);

    // N1's allclose tolerances in the claims list.
    const report::Tolerance tol = run.is_float64() ? report::Tolerance{.rtol = 1e-12, .atol = 1e-12}
                                                   : report::Tolerance{.rtol = 1e-5, .atol = 1e-6};
    report::Table t("tokenwise");
    t.add_column("d", ColumnType::integer)
        .add_column("m", ColumnType::integer)
        .add_column("tokens", ColumnType::integer)
        .add_column("dtype", ColumnType::text)
        .add_column("max_abs_row_by_row", ColumnType::real, 3)
        .add_column("max_abs_permuted", ColumnType::real, 3)
        .add_column("rtol", ColumnType::real, 2)
        .add_column("atol", ColumnType::real, 2)
        .add_column("allclose_row_by_row", ColumnType::boolean)
        .add_column("allclose_permuted", ColumnType::boolean);
    t.add_row({static_cast<std::int64_t>(d), static_cast<std::int64_t>(m), static_cast<std::int64_t>(tokens),
               run.string("dtype"), nn::max_abs_difference(batched, row_by_row), nn::max_abs_difference(F_of_perm, F_perm_rows),
               tol.rtol, tol.atol, allclose(batched, row_by_row, tol), allclose(F_of_perm, F_perm_rows, tol)});
    return {t};
}


}  // namespace

runner::ExperimentKind make() {
    runner::Schema schema;
    add_ffn_keys(schema, kKeys);
    return {.name = "tokenwise",
            .description = "the FFN is position-wise: batch vs row by row, and permutation equivariance",
            .schema = std::move(schema),
            .headlines = {{"tokenwise", {"d", "m", "tokens", "max_abs_row_by_row", "max_abs_permuted", "allclose_row_by_row", "allclose_permuted"}}},
            .keys_from_files = ffn_keys_from_files,
            .validate = refuse_ffn_beyond_memory,
            .run = by_dtype<compute<float>, compute<double>>};
}

}  // namespace ffn::experiments::tokenwise
