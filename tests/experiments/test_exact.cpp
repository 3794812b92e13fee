// The exact experiments' numbers, asserted directly (not through their
// configs' expectations): a change in either the code or a config's expect
// block cannot hide a wrong value.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "experiments/run_config.h"

using namespace ffn;
using report::Cell;
using test::run_config;
using test::table;

namespace {
Cell i64(std::int64_t v) { return v; }
Cell text(const char* v) { return std::string(v); }
std::size_t row_where(const report::Table& t, const std::string& column, const Cell& value) {
    for (std::size_t r = 0; r < t.row_count(); ++r)
        if (t.at(r, column) == value) return r;
    FAIL("no row with " << column);
    return 0;
}
}  // namespace

TEST_CASE("param_count: the documents' parameter counts from instantiated layers") {
    const auto result = run_config("params.json");
    const auto& t = table(result, "params");
    const auto d512 = row_where(t, "d", i64(512));
    CHECK(t.at(d512, "attn_weights") == i64(1048576));
    CHECK(t.at(d512, "ffn_weights") == i64(2097152));
    CHECK(t.at(d512, "ffn_params") == i64(2099712));
    CHECK(std::get<double>(t.at(d512, "ffn_share")) == 2.0 / 3.0);
    const auto d768 = row_where(t, "d", i64(768));
    CHECK(t.at(d768, "ffn_weights") == i64(4718592));
    CHECK(t.at(d768, "gated_m") == i64(2048));
    CHECK(t.at(d768, "gated_weights") == i64(4718592));
    CHECK(t.at(row_where(t, "d", i64(4096)), "largest_matrix") == i64(58720256));
    const auto d128 = row_where(t, "d", i64(128));
    CHECK(t.at(d128, "up_shape") == text("512x128"));
    CHECK(t.at(d128, "down_shape") == text("128x512"));
    CHECK(result.expect.missed == 0);
    CHECK(result.expect.passed == 10);
}

TEST_CASE("abs_construction: doc 000's worked values in float64 and float32") {
    for (const char* dtype : {"float64", "float32"}) {
        CAPTURE(dtype);
        const auto result = run_config("abs.json", {std::string("dtype=") + dtype});
        const auto& w = table(result, "worked_example");
        CHECK(w.at(row_where(w, "quantity", text("Ax+a")), "value") == text("(-2, 2, 3, -3)"));
        CHECK(w.at(row_where(w, "quantity", text("h")), "value") == text("(0, 2, 3, 0)"));
        CHECK(w.at(row_where(w, "quantity", text("y")), "value") == text("(2, 3)"));
        CHECK(w.at(row_where(w, "quantity", text("y without activation")), "value") == text("(0, 0)"));
        CHECK(w.at(row_where(w, "quantity", text("BA")), "value") == text("[0 0; 0 0]"));
        const auto& j = table(result, "jacobian");
        for (std::size_t r = 0; r < j.row_count(); ++r) CHECK(j.at(r, "rank") == i64(2));
        const auto& g = table(result, "grid");
        CHECK(g.at(0, "max_abs_error_vs_abs") == Cell{0.0});
        CHECK(g.at(0, "max_abs_without_activation") == Cell{0.0});
        CHECK(result.expect.missed == 0);
    }
}

TEST_CASE("abs_construction: a Jacobian at a point with dead units has lower rank") {
    // Moving the input biases to -5 kills every unit near the origin: J = 0.
    const auto result = run_config("abs.json", {"a=[-5,-5,-5,-5]", "jacobian_points=[[0.5,0.5]]"});
    CHECK(table(result, "jacobian").at(0, "rank") == i64(0));
}

TEST_CASE("residual_ablation: doc 003's residual write and the ablation of h4") {
    const auto result = run_config("ablation.json");
    const auto& f = table(result, "forward");
    CHECK(f.at(row_where(f, "quantity", text("Delta")), "value") == text("(1, 0.5, -2)"));
    CHECK(f.at(row_where(f, "quantity", text("y")), "value") == text("(2, -0.5, 0)"));
    CHECK(f.at(row_where(f, "quantity", text("Delta with h4=0")), "value") == text("(0, 2.5, -2)"));
    CHECK(f.at(row_where(f, "quantity", text("y with h4=0")), "value") == text("(1, 1.5, 0)"));
    CHECK(f.at(row_where(f, "quantity", text("change in y")), "value") == text("(-1, 2, 0)"));
    // The readout shortcut -h_j q.c_j equals the recomputed change for every
    // unit, since y is linear in h.
    const auto& r = table(result, "readout");
    for (std::size_t u = 0; u < r.row_count(); ++u) CHECK(r.at(u, "abs_difference") == Cell{0.0});
    CHECK(r.at(1, "predicted_change") == Cell{2.0});  // unit 2: -2 * (q.c_2 = -1)
}

TEST_CASE("a shape that does not fit is one clear error naming the key") {
    CHECK_THROWS_WITH(run_config("ablation.json", {"b_out=[0, 1]"}),
                      doctest::Contains("key 'b_out': expected 3 values (one bias per stream coordinate), got 2"));
    CHECK_THROWS_WITH(run_config("ablation.json", {"ablate=9"}),
                      doctest::Contains("key 'ablate': expected a hidden unit between 1 and 4, got 9"));
}

TEST_CASE("activations: doc 002's functions, their least values, limits and zeros (float64)") {
    const auto r = run_config("activation_table.json", {"dtype=float64"});
    const auto& values = table(r, "values");
    const auto value = [&](const char* act, double z) {
        for (std::size_t i = 0; i < values.row_count(); ++i)
            if (values.at(i, "activation") == text(act) && values.at(i, "z") == Cell{z}) return *report::as_number(values.at(i, "value"));
        FAIL("no value for " << act << " at " << z);
        return 0.0;
    };
    // Python's math module (another libm, another formula for sigmoid): the
    // same to a few float64 ulps.
    CHECK(value("relu", -3) == 0.0);
    CHECK(value("relu", 2) == 2.0);
    CHECK(value("tanh", 1) == doctest::Approx(0.7615941559557649).epsilon(1e-15));
    CHECK(value("gelu", 1) == doctest::Approx(0.8413447460685429).epsilon(1e-15));
    CHECK(value("gelu_tanh", 1) == doctest::Approx(0.8411919906082768).epsilon(1e-15));
    CHECK(value("silu", 1) == doctest::Approx(0.7310585786300049).epsilon(1e-15));
    CHECK(values.row_count() == 7 * 7);  // every activation at z = -3..3

    const auto& shape = table(r, "shape");
    const auto row = [&](const char* act) { return row_where(shape, "activation", text(act)); };
    // SiLU's minimum in closed form: z* = -1 - W(1/e), silu(z*) = z* + 1.
    const double silu_at = -1.2784645427610738;
    CHECK(*report::as_number(shape.at(row("silu"), "at_z")) == doctest::Approx(silu_at).epsilon(1e-9));
    CHECK(*report::as_number(shape.at(row("silu"), "least_value")) == doctest::Approx(silu_at + 1).epsilon(1e-12));
    // GELU's: a ternary search on Python's erf.
    CHECK(*report::as_number(shape.at(row("gelu"), "at_z")) == doctest::Approx(-0.7517915246936).epsilon(1e-9));
    CHECK(*report::as_number(shape.at(row("gelu"), "least_value")) == doctest::Approx(-0.1699712074799037).epsilon(1e-12));
    CHECK(shape.at(row("relu"), "least") == text("on z <= 0"));
    CHECK(shape.at(row("relu"), "zeros_in_scan") == text("z <= 0"));
    CHECK(shape.at(row("tanh"), "limit_minus_inf") == text("-1"));
    CHECK(shape.at(row("tanh"), "limit_plus_inf") == text("1"));
    CHECK(shape.at(row("tanh"), "zeros_in_scan") == text("z = 0"));
    CHECK(shape.at(row("silu"), "zeros_in_scan") == text("z = 0"));
    CHECK(shape.at(row("sigmoid"), "zeros_in_scan") == text("none"));
    CHECK(shape.at(row("identity"), "least") == text("unbounded below as z -> -inf"));
    CHECK(shape.at(row("relu"), "limit_plus_inf") == text("+inf"));

    // |gelu - gelu_tanh| peaks at +-2.69894 (a ternary search on Python's
    // erf and tanh); the peak is flat, so z is known to about 1e-6.
    const auto& gap = table(r, "gelu_gap");
    CHECK(*report::as_number(gap.at(0, "at_z")) == doctest::Approx(2.698940915522238).epsilon(1e-6));
    CHECK(*report::as_number(gap.at(0, "max_abs_gelu_minus_gelu_tanh")) == doctest::Approx(0.0004732355206868988).epsilon(1e-9));
}

TEST_CASE("residual_ablation as a pre-norm branch: y = x + F(N(x)) for LayerNorm and RMSNorm (float64)") {
    // Seed 003's weights, recomputed here with plain loops.
    const double W_in[4][3] = {{1, 1, 0}, {0, -1, 1}, {1, 0, -1}, {-1, 1, 1}}, b_in[4] = {0, -1, 1, 1};
    const double W_out[3][4] = {{1, 0, -1, 1}, {0, 1, 0, -2}, {1, -1, 2, 0}}, b_out[3] = {0, 0.5, 0};
    const double x[3] = {1, -1, 2}, eps = 1e-5;
    const auto parse = [](const Cell& c) {
        std::string s = std::get<std::string>(c);
        std::vector<double> v;
        for (std::size_t at = 1; at < s.size();) {
            std::size_t used = 0;
            v.push_back(std::stod(s.substr(at), &used));
            at += used + 2;  // ", "
        }
        return v;
    };
    const auto r = run_config("prenorm.json");
    const auto& fwd = table(r, "forward");
    for (const char* norm : {"layernorm", "rmsnorm"}) {
        CAPTURE(norm);
        double mean = 0, square = 0;
        for (double v : x) mean += v / 3, square += v * v / 3;
        const bool layer = std::string(norm) == "layernorm";
        const double scale = layer ? 1 / std::sqrt(square - mean * mean + eps) : 1 / std::sqrt(square + eps);
        double u[3], h[4], y[3];
        for (int i = 0; i < 3; ++i) u[i] = (x[i] - (layer ? mean : 0)) * scale;
        for (int j = 0; j < 4; ++j) {
            h[j] = b_in[j];
            for (int i = 0; i < 3; ++i) h[j] += W_in[j][i] * u[i];
            h[j] = std::max(h[j], 0.0);
        }
        for (int i = 0; i < 3; ++i) {
            y[i] = x[i] + b_out[i];
            for (int j = 0; j < 4; ++j) y[i] += W_out[i][j] * h[j];
        }
        std::size_t row_u = 0, row_y = 0;
        for (std::size_t k = 0; k < fwd.row_count(); ++k) {
            if (fwd.at(k, "norm") != text(norm)) continue;
            if (fwd.at(k, "quantity") == Cell{"u = " + std::string(norm) + "(x)"}) row_u = k;
            if (fwd.at(k, "quantity") == text("y")) row_y = k;
        }
        const auto got_u = parse(fwd.at(row_u, "value")), got_y = parse(fwd.at(row_y, "value"));
        REQUIRE(got_u.size() == 3);
        REQUIRE(got_y.size() == 3);
        // Exact to 6 digits is the claim; the two computations differ only in
        // summation order, so they agree to ~1e-15.
        for (int i = 0; i < 3; ++i) {
            CHECK(got_u[i] == doctest::Approx(u[i]).epsilon(1e-12));
            CHECK(got_y[i] == doctest::Approx(y[i]).epsilon(1e-12));
        }
    }
}

TEST_CASE("depth_vs_width: L composed hats make 2^L pieces - x^2 to exactly 4^-(L+1)") {
    const auto r = run_config("depth_vs_width.json");
    const auto& t = table(r, "depth");
    REQUIRE(t.row_count() == 8);
    for (std::size_t row = 0; row < 8; ++row) {
        const std::int64_t L = static_cast<std::int64_t>(row) + 1, pieces = std::int64_t{1} << L;
        CAPTURE(L);
        CHECK(t.at(row, "depth") == i64(L));
        CHECK(t.at(row, "deep_units") == i64(2 * L));
        CHECK(t.at(row, "pieces") == i64(pieces));
        CHECK(t.at(row, "pieces_on_grid") == i64(pieces));
        // The first slope, 2^L, is no sum of the slope changes (each +-2^(L+1)):
        // without a skip term every interior kink and one more unit.
        CHECK(t.at(row, "shallow_units_needed") == i64(pieces));
        CHECK(t.at(row, "shallow_units_built") == i64(pieces));
        CHECK(t.at(row, "shallow_max_abs_diff") == Cell{0.0});
        CHECK(t.at(row, "x2_max_error") == Cell{std::pow(4.0, -static_cast<double>(L + 1))});
    }
}

TEST_CASE("abs_construction: abs(t) is not affine - relu(t) + relu(-t) is exact (float64)") {
    const auto r = run_config("abs.json", {"dtype=float64"});
    const auto& t = table(r, "affine_fit");
    REQUIRE(t.row_count() == 2);
    const auto num = [&](std::size_t row, const char* c) { return *report::as_number(t.at(row, c)); };
    // On {-1, 0, 1} the best line is the constant 2/3: residuals 1/3, -2/3, 1/3.
    CHECK(std::fabs(num(0, "slope")) < 1e-15);
    CHECK(num(0, "intercept") == doctest::Approx(2.0 / 3).epsilon(1e-15));
    CHECK(num(0, "max_abs_residual") == doctest::Approx(2.0 / 3).epsilon(1e-15));
    CHECK(num(0, "rmse") == doctest::Approx(std::sqrt(2.0) / 3).epsilon(1e-15));
    // On the 400-point grid the line is (nearly, by rounding of the grid)
    // the constant mean |t|, recomputed here.
    double mean = 0, ss = 0, worst = 0;
    for (int i = 0; i < 400; ++i) mean += std::fabs(-2.0 + 4.0 * i / 399.0) / 400;
    for (int i = 0; i < 400; ++i) {
        ss += std::pow(mean - std::fabs(-2.0 + 4.0 * i / 399.0), 2);
        worst = std::max(worst, std::fabs(mean - std::fabs(-2.0 + 4.0 * i / 399.0)));
    }
    CHECK(std::fabs(num(1, "slope")) < 1e-12);
    CHECK(num(1, "intercept") == doctest::Approx(mean).epsilon(1e-12));
    CHECK(num(1, "rmse") == doctest::Approx(std::sqrt(ss / 400)).epsilon(1e-9));
    CHECK(num(1, "max_abs_residual") == doctest::Approx(worst).epsilon(1e-9));
    CHECK(num(0, "relu_pair_max_error") == 0.0);
    CHECK(num(1, "relu_pair_max_error") == 0.0);
}

TEST_CASE("param_count: P3's layer of 4096 x 14336 with its bias, and X10's shortfalls") {
    const auto params = run_config("params.json");
    const auto& p = table(params, "params");
    const std::size_t big = row_where(p, "d", i64(4096));
    CHECK(p.at(big, "up_layer_params") == i64(4096LL * 14336 + 14336));  // mn + n
    CHECK(p.at(big, "up_layer_flops_per_token") == i64(2LL * 4096 * 14336));
    const auto gated = run_config("gated_width.json");
    const auto& g = table(gated, "params");
    for (const std::int64_t d : {512, 768, 1024, 4096}) {
        CAPTURE(d);
        const std::size_t row = row_where(g, "d", i64(d));
        const std::int64_t m = 4 * d, gm = 2 * m / 3;
        CHECK(g.at(row, "gated_m") == i64(gm));
        CHECK(*report::as_number(g.at(row, "gated_m_exact")) == doctest::Approx(8.0 * static_cast<double>(d) / 3).epsilon(1e-15));
        CHECK(g.at(row, "gated_shortfall") == i64(2 * d * m - 3 * d * gm));
        CHECK(g.at(row, "gated_matches") == Cell{d % 3 == 0});
    }
}

TEST_CASE("superposition: doc 003's readouts, the orthogonal code and the sparsity formula") {
    const auto result = run_config("superposition.json", {"samples=20000"});
    const auto& t = table(result, "readout");
    auto num = [&](const report::Table& tab, std::size_t r, const char* c) { return std::get<double>(tab.at(r, c)); };
    // float64 sums of two products with sqrt(3)/2: within 1e-15 of the exact values.
    const double tol = 1e-15;
    for (const char* single : {"A", "B", "C", "B at 2", "A at 0.3"}) {
        CAPTURE(single);
        CHECK(t.at(row_where(t, "case", text(single)), "relu_exact") == Cell{true});
        CHECK(t.at(row_where(t, "case", text(single)), "linear_exact") == Cell{false});
    }
    const auto a = row_where(t, "case", text("A"));  // D^T v_A = (1, -1/2, -1/2)
    CHECK(num(t, a, "dtr_B") == doctest::Approx(-0.5).epsilon(tol));
    CHECK(num(t, a, "linear_A") == doctest::Approx(2.0 / 3.0).epsilon(tol));  // the pseudo-inverse undershoots
    const auto b2 = row_where(t, "case", text("B at 2"));  // (0, 2, 0): D^T r = (-1, 2, -1)
    CHECK(num(t, b2, "dtr_A") == doctest::Approx(-1).epsilon(tol));
    CHECK(num(t, b2, "dtr_B") == doctest::Approx(2).epsilon(tol));
    CHECK(num(t, b2, "dtr_C") == doctest::Approx(-1).epsilon(tol));
    const auto ab = row_where(t, "case", text("A+B"));  // r = (1/2, sqrt 3 / 2), readout (1/2, 1/2, 0)
    CHECK(num(t, ab, "r_2") == doctest::Approx(std::sqrt(3.0) / 2).epsilon(tol));
    CHECK(num(t, ab, "relu_A") == doctest::Approx(0.5).epsilon(tol));
    CHECK(num(t, ab, "relu_B") == doctest::Approx(0.5).epsilon(tol));
    CHECK(num(t, ab, "relu_C") == 0.0);
    const auto all = row_where(t, "case", text("A+B+C"));  // the same r as no feature at all
    CHECK(std::fabs(num(t, all, "r_1")) < tol);
    CHECK(std::fabs(num(t, all, "r_2")) < 1e-15);
    CHECK(t.at(all, "relu_exact") == Cell{false});
    const auto& o = table(result, "orthogonal");
    for (std::size_t r = 0; r < o.row_count(); ++r) CHECK(o.at(r, "exact") == Cell{true});
    const auto& s = table(result, "sparsity");
    for (std::size_t r = 0; r < s.row_count(); ++r) {
        const double p = num(s, r, "p");
        // At most one of three active: (1-p)^3 + 3 p (1-p)^2, written out.
        CHECK(num(s, r, "exact_probability") == doctest::Approx((1 - p) * (1 - p) * (1 - p) + 3 * p * (1 - p) * (1 - p)).epsilon(1e-14));
        CHECK(num(s, r, "mse_relu") <= num(s, r, "mse_linear"));  // what the ReLU buys, at every p
        // ... against a linear map without intercept; the best affine
        // readout wins once most features are on.
        CHECK(s.at(r, "relu_beats_affine") == Cell{p <= 0.3});
    }
    // With every feature on, a = U(0, 1)^3 and r = D a keeps all of a but
    // its component along (1, 1, 1)/sqrt 3, of variance 1/12: the best
    // affine readout's MSE is 1/12. At 20000 samples the estimate's
    // relative standard error is near 0.7%: within 2.5% is 3.5 of them.
    CHECK(num(s, s.row_count() - 1, "p") == 1.0);
    CHECK(std::fabs(num(s, s.row_count() - 1, "mse_affine") - 1.0 / 12) <= 0.025 / 12);
}

TEST_CASE("privileged_basis: ReLU commutes with permutations and positive scalings only") {
    const auto result = run_config("privileged_basis.json", {"dtype=float64", "tokens=20"});
    auto num = [&](const report::Table& tab, std::size_t r, const char* c) { return std::get<double>(tab.at(r, c)); };
    const auto& h = table(result, "by_hand");
    const auto last = row_where(h, "step", text("relu(R x) - R relu(x)"));
    // relu(R (1, -1)) = (sqrt 2, 0); R relu((1, -1)) = (1, 1)/sqrt 2.
    CHECK(num(h, last, "v_1") == doctest::Approx(std::sqrt(2.0) - 1 / std::sqrt(2.0)).epsilon(1e-15));
    CHECK(num(h, last, "v_2") == doctest::Approx(-1 / std::sqrt(2.0)).epsilon(1e-15));
    const auto& c = table(result, "commutes");
    CHECK(num(c, row_where(c, "kind", text("permutation")), "max_abs_difference") == 0.0);
    CHECK(num(c, row_where(c, "kind", text("positive_diagonal")), "max_abs_difference") == 0.0);
    CHECK(num(c, row_where(c, "kind", text("negative_diagonal")), "max_abs_difference") > 0.1);
    CHECK(num(c, row_where(c, "kind", text("rotation")), "max_abs_difference") > 0.1);
    const auto& m = table(result, "mlp");
    // Rounding only: float64 sums over 256 hidden units, relative 1e-12 (the claims list's bound).
    CHECK(num(m, row_where(m, "kind", text("permutation")), "relative_change") < 1e-12);
    CHECK(num(m, row_where(m, "kind", text("positive_diagonal")), "relative_change") < 1e-12);
    CHECK(num(m, row_where(m, "kind", text("negative_diagonal")), "relative_change") > 0.1);
    CHECK(num(m, row_where(m, "kind", text("rotation")), "relative_change") > 0.1);
}

TEST_CASE("gated_forms: absorption holds, and the symmetries break exactly where doc 004 says") {
    const auto result = run_config("gated_forms.json");
    auto num = [&](const report::Table& tab, std::size_t r, const char* c) { return std::get<double>(tab.at(r, c)); };
    const auto& a = table(result, "absorption");
    for (std::size_t r = 0; r < a.row_count(); ++r) CHECK(a.at(r, "agrees") == Cell{true});
    // N5 and N6: the observed zero / non-zero pattern is the theory's, row by row.
    for (const char* name : {"symmetry", "hand"}) {
        const auto& t = table(result, name);
        REQUIRE(t.row_count() > 0);
        for (std::size_t r = 0; r < t.row_count(); ++r) CHECK(t.at(r, "agrees") == Cell{true});
    }
    // N6 by hand: a = x.q = 1, b = x.k = -2. Phi(1), Phi(2) from Python's math.erfc.
    const double phi1 = 0.8413447460685429, phi2 = 0.9772498680518208;
    const auto& h = table(result, "hand");
    auto row = [&](const char* form, const char* act, const char* how) {
        for (std::size_t r = 0; r < h.row_count(); ++r)
            if (h.at(r, "dtype") == text("float64") && h.at(r, "form") == text(form) && h.at(r, "activation") == text(act) &&
                h.at(r, "transformation") == text(how))
                return r;
        FAIL("no row");
        return std::size_t{0};
    };
    CHECK(num(h, row("gated", "gelu", "scale 2"), "output") == doctest::Approx(-2 * phi1).epsilon(1e-6));  // gelu(1) b
    CHECK(num(h, row("gated", "gelu", "scale 2"), "max_abs_change") == doctest::Approx(2 * (phi2 - phi1)).epsilon(1e-6));
    CHECK(num(h, row("gated", "relu", "swap q and k"), "max_abs_change") == doctest::Approx(2).epsilon(1e-12));
    CHECK(num(h, row("gated", "relu", "scale 2"), "max_abs_change") == 0.0);
    CHECK(num(h, row("bilinear", "silu", "swap q and k"), "output") == doctest::Approx(-2 / (1 + std::exp(2.0))).epsilon(1e-6));
    // N7, the k-v rescaling k -> c k, v -> v / c. The gated form's b sits
    // outside its activation: gelu(a) (c b) (1 / c), unchanged for every c.
    CHECK(num(h, row("gated", "gelu", "k-v scale 2"), "max_abs_change") == 0.0);
    CHECK(num(h, row("gated", "silu", "k-v scale -1"), "max_abs_change") == 0.0);
    // The bilinear form's is inside: gelu(-2) = -2 Phi(-2) becomes
    // gelu(-4) / 2 = -2 Phi(-4), a change of 2 (Phi(-2) - Phi(-4)); relu(-2) = 0
    // becomes relu(2) (-1) = -2. Phi(-2), Phi(-4) from Python's math.erfc.
    const double phi_m2 = 0.02275013194817922, phi_m4 = 3.1671241833119965e-05;
    CHECK(num(h, row("bilinear", "gelu", "k-v scale 2"), "max_abs_change") == doctest::Approx(2 * (phi_m2 - phi_m4)).epsilon(1e-6));
    CHECK(num(h, row("bilinear", "relu", "k-v scale -1"), "max_abs_change") == doctest::Approx(2).epsilon(1e-12));
    CHECK(num(h, row("bilinear", "relu", "k-v scale 2"), "max_abs_change") == 0.0);
    // Each form keeps one continuous rescaling per unit, derived, for every
    // activation: q-k for the bilinear form, k-v for the gated one.
    for (const char* act : {"relu", "gelu", "silu", "identity"}) {
        CHECK(h.at(row("bilinear", act, "scale 2"), "unchanged_in_theory") == Cell{true});
        CHECK(h.at(row("gated", act, "k-v scale 2"), "unchanged_in_theory") == Cell{true});
    }
    const auto& s = table(result, "storage");
    CHECK(s.at(row_where(s, "form", text("rank-1 bilinear")), "parameters") == i64(3 * 768 * 3072));
    CHECK(s.at(row_where(s, "form", text("gated MLP")), "parameters") == i64(3 * 768 * 3072));
    CHECK(s.at(row_where(s, "form", text("per-pair Q_j, before absorbing")), "parameters") == i64(3072LL * 768 * 768 + 2 * 768 * 3072));
}
