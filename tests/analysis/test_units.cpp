// analysis::profile_units on hand-built layers whose answers are known.
// Every value here is a ratio of a few small numbers, computed in float64
// with a few roundings (1/sqrt(2) among them), so Approx's default 1e-5
// relative is far looser than their error and far tighter than any mistake.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "analysis/units.h"
#include "core/rng.h"
#include "nn/init.h"

using namespace ffn;

namespace {

// A d -> units -> d ReLU MLP whose first layer reads `rows` with `bias`.
nn::MLP<double> first_layer(const std::vector<std::vector<double>>& rows, const std::vector<double>& bias) {
    const std::size_t d = rows.front().size();
    nn::MLP<double> mlp({d, rows.size(), d}, nn::Activation::relu);
    for (std::size_t j = 0; j < rows.size(); ++j) {
        for (std::size_t k = 0; k < d; ++k) mlp.layers[0].weight(j, k) = rows[j][k];
        mlp.layers[0].bias(j) = bias[j];
    }
    return mlp;
}

nn::Matrix<double> matrix(const std::vector<std::vector<double>>& rows) {
    nn::Matrix<double> X = nn::Matrix<double>::from_shape({rows.size(), rows.front().size()});
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t k = 0; k < rows[r].size(); ++k) X(r, k) = rows[r][k];
    return X;
}

const std::vector<std::vector<double>> kAxes = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

}  // namespace

TEST_CASE("profile_units: a unit reading one planted direction is selective, aligned and answers one feature") {
    const auto mlp = first_layer({{1, 0, 0}, {0, 0, 2}}, {0, -0.5});
    const auto inputs = matrix({{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, 0, 1}});
    const auto units = analysis::profile_units(mlp, inputs, kAxes);
    REQUIRE(units.size() == 2);
    CHECK(units[0].firing == doctest::Approx(0.25));  // only the first input
    CHECK(units[1].firing == doctest::Approx(0.25));  // 2 - 0.5 > 0 on the last input only
    for (const auto& u : units) {
        REQUIRE(u.selectivity);
        CHECK(*u.selectivity == doctest::Approx(1.0));
        CHECK(*u.features == 1);
        CHECK(u.alignment == doctest::Approx(1.0));
    }
    CHECK(*units[0].best_feature == 0);
    CHECK(*units[1].best_feature == 2);
}

TEST_CASE("profile_units: a unit between two directions splits its response and its alignment") {
    const double r = 1 / std::sqrt(2.0);
    const auto mlp = first_layer({{r, r, 0}, {1, 0.4, 0}}, {0, 0});
    const auto units = analysis::profile_units(mlp, matrix({{0, 0, 0}}), kAxes);
    // Unit 0: R = (r/2, r/2, 0), so half of its response is each feature's.
    CHECK(*units[0].selectivity == doctest::Approx(0.5));
    CHECK(*units[0].features == 2);
    CHECK(*units[0].best_feature == 0);  // the first of a tie
    CHECK(units[0].alignment == doctest::Approx(r));
    // Unit 1: R = (0.5, 0.2, 0): one feature at half its peak, two at 0.3.
    CHECK(*units[1].selectivity == doctest::Approx(0.5 / 0.7));
    CHECK(*units[1].features == 1);
    CHECK(*analysis::profile_units(mlp, matrix({{0, 0, 0}}), kAxes, 0.3)[1].features == 2);
    CHECK(units[1].alignment == doctest::Approx(1 / std::sqrt(1.16)));
    CHECK(units[0].firing == 0.0);  // the zero input: pre-activation 0 is not positive
}

TEST_CASE("profile_units: a unit no feature moves has no selectivity, and a zero read vector no alignment") {
    const auto mlp = first_layer({{0, 0, 0}, {1, 0, 0}}, {0.5, -2});
    const auto units = analysis::profile_units(mlp, matrix({{1, 1, 1}, {0, 0, 0}}), kAxes);
    CHECK(units[0].firing == 1.0);  // its bias alone
    CHECK_FALSE(units[0].selectivity);
    CHECK_FALSE(units[0].features);
    CHECK(units[0].alignment == 0.0);
    CHECK_FALSE(units[1].selectivity);  // ReLU keeps it at 0 for any one feature at unit strength
    CHECK(units[1].alignment == doctest::Approx(1.0));
}

TEST_CASE("profile_units: a unit on at the zero input is measured from its value there") {
    // h(0) = 0.5, h(f0) = 1.5, h(-f0) = relu(-0.5) = 0: R0 = (1 + 0.5) / 2; a
    // direction of length 2 counts for its direction only in the alignment.
    const auto mlp = first_layer({{1, 0, 0}}, {0.5});
    const auto units = analysis::profile_units(mlp, matrix({{0, 0, 0}}), {{1, 0, 0}, {0, 1, 0}});
    CHECK(units[0].firing == 1.0);
    CHECK(*units[0].selectivity == doctest::Approx(1.0));  // R = (0.75, 0)
    CHECK(analysis::profile_units(mlp, matrix({{0, 0, 0}}), {{2, 0, 0}})[0].alignment == doctest::Approx(1.0));
    // A GELU unit is never exactly off: the feature it does not read moves it
    // not at all only because its weight there is 0.
    nn::MLP<double> gelu({3, 1, 3}, nn::Activation::gelu);
    gelu.layers[0].weight(0, 0) = 1;
    gelu.layers[0].weight(0, 1) = gelu.layers[0].weight(0, 2) = 0;
    gelu.layers[0].bias(0) = 0;
    const auto g = analysis::profile_units(gelu, matrix({{0, 0, 0}}), kAxes);
    // R0 = (gelu(1) + |gelu(-1)|) / 2 = (0.8413 + 0.1587) / 2 = 0.5, the others 0.
    CHECK(*g[0].selectivity == doctest::Approx(1.0));
    CHECK(*g[0].features == 1);
}

TEST_CASE("profile_units: inputs or directions of another width are refused") {
    const auto mlp = first_layer({{1, 0, 0}}, {0});
    CHECK_THROWS_WITH(analysis::profile_units(mlp, matrix({{1, 0}}), kAxes), doctest::Contains("inputs' width"));
    CHECK_THROWS_WITH(analysis::profile_units(mlp, matrix({{1, 0, 0}}), {{1, 0}}), doctest::Contains("direction's length"));
}

TEST_CASE("ablate_unit: doc 003's worked ablation, unit 4 zeroed") {
    // Doc 003's 3-4-3 MLP at x = (1, -1, 2): h = (0, 2, 0, 1), and zeroing
    // unit 4 changes the output by (-1, 2, 0): its write vector is
    // c_4 = (1, -2, 0), so the third-coordinate readout does not move and
    // the second moves by -h_4 q.c_4 = -1 * -2 = 2. Small integers in
    // float64: exact.
    auto mlp = first_layer({{1, 1, 0}, {0, -1, 1}, {1, 0, -1}, {-1, 1, 1}}, {0, -1, 1, 1});
    const std::vector<std::vector<double>> w_out = {{1, 0, -1, 1}, {0, 1, 0, -2}, {1, -1, 2, 0}};
    for (std::size_t k = 0; k < 3; ++k) {
        for (std::size_t j = 0; j < 4; ++j) mlp.layers[1].weight(k, j) = w_out[k][j];
        mlp.layers[1].bias(k) = k == 1 ? 0.5 : 0.0;
    }
    const auto x = matrix({{1, -1, 2}});
    const auto& delta = mlp.forward(x);  // 003's contribution before the ablation: (1, 1/2, -2)
    CHECK(delta(0, 0) == 1.0);
    CHECK(delta(0, 1) == 0.5);
    CHECK(delta(0, 2) == -2.0);
    const auto third = analysis::ablate_unit(mlp, x, 3, 0.0, {0, 0, 1});
    CHECK(third.output_change == std::vector<double>{-1, 2, 0});
    CHECK(third.readout_recomputed[0] == 0.0);
    CHECK(third.readout_predicted[0] == 0.0);
    const auto second = analysis::ablate_unit(mlp, x, 3, 0.0, {0, 1, 0});
    CHECK(second.readout_recomputed[0] == 2.0);
    CHECK(second.readout_predicted[0] == 2.0);
    // Replaced by 3 instead of zeroed: the change is (3 - 1) c_4.
    CHECK(analysis::ablate_unit(mlp, x, 3, 3.0, {0, 1, 0}).readout_predicted[0] == -4.0);
    CHECK_THROWS_WITH(analysis::ablate_unit(mlp, x, 4, 0.0, {0, 0, 1}), doctest::Contains("no such hidden unit"));
    CHECK_THROWS_WITH(analysis::ablate_unit(mlp, x, 0, 0.0, {0, 1}), doctest::Contains("readout's length"));
}

TEST_CASE("edit_direction: doc 003's 3-4-3 MLP with its unit 4 as the direction gives the ablation's numbers") {
    // Editing along the unit vector e_4 of the hidden space is the
    // ablation of unit 4: projecting it out zeroes h_4, setting it to 3
    // replaces h_4 by 3. Small integers in float64: exact.
    auto mlp = first_layer({{1, 1, 0}, {0, -1, 1}, {1, 0, -1}, {-1, 1, 1}}, {0, -1, 1, 1});
    const std::vector<std::vector<double>> w_out = {{1, 0, -1, 1}, {0, 1, 0, -2}, {1, -1, 2, 0}};
    for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t j = 0; j < 4; ++j) mlp.layers[1].weight(k, j) = w_out[k][j];
    const auto x = matrix({{1, -1, 2}});
    nn::Matrix<double> H = nn::apply(mlp.layers[0], x);
    nn::activate_inplace(mlp.activation, std::span<double>(H.data(), H.size()));
    const nn::Matrix<double> Y = nn::apply(mlp.layers[1], H), kept = H;
    const auto out = analysis::edit_direction(H, Y, mlp.layers[1], {0, 0, 0, 2}, std::nullopt, {0, 1, 0});
    CHECK(out.output_change == std::vector<double>{-1, 2, 0});
    CHECK(out.readout_recomputed[0] == 2.0);
    CHECK(out.readout_predicted[0] == 2.0);
    CHECK(H == kept);  // put back
    const auto set = analysis::edit_direction(H, Y, mlp.layers[1], {0, 0, 0, 1}, 3.0, {0, 1, 0});
    CHECK(set.readout_predicted[0] == -4.0);
    CHECK(set.readout_recomputed[0] == -4.0);
    CHECK_THROWS_WITH(analysis::edit_direction(H, Y, mlp.layers[1], {0, 0, 0, 0}, std::nullopt, {0, 1, 0}), doctest::Contains("zero"));
}

TEST_CASE("edit_direction: a random direction projected out leaves no coefficient, and the down projection predicts the readout") {
    Rng rng(7);
    nn::MLP<double> mlp({6, 20, 6}, nn::Activation::gelu);
    nn::initialize(mlp, {nn::InitScheme::torch_default}, rng);
    nn::Matrix<double> X = nn::Matrix<double>::from_shape({50, 6});
    for (auto& v : X) v = rng.normal();
    nn::Matrix<double> H = nn::apply(mlp.layers[0], X);
    nn::activate_inplace(mlp.activation, std::span<double>(H.data(), H.size()));
    const nn::Matrix<double> Y = nn::apply(mlp.layers[1], H);
    const std::vector<double> r = {1, 0, -1, 0.5, 0, 2}, q = {0.3, -1, 0, 0, 1, 0.25};
    const std::vector<double> u = analysis::hidden_direction_of(mlp.layers[1], r);
    double norm = 0;
    for (double v : u) norm += v * v;
    CHECK(norm == doctest::Approx(1.0).epsilon(1e-15));
    const auto e = analysis::edit_direction(H, Y, mlp.layers[1], u, std::nullopt, q);
    // float64: the recomputed change differs from the predicted one by the
    // rounding of two 20-term products of O(1) values, well under 1e-12.
    for (std::size_t i = 0; i < 50; ++i) CHECK(std::abs(e.readout_predicted[i] - e.readout_recomputed[i]) < 1e-12);
    // The edit removes every input's coefficient along u: its output
    // change is W_down (-(h.u) u), to float64 rounding.
    for (std::size_t i = 0; i < 50; ++i) {
        double a = 0;
        for (std::size_t k = 0; k < 20; ++k) a += H(i, k) * u[k];
        for (std::size_t o = 0; o < 6; ++o) {
            double wu = 0;
            for (std::size_t k = 0; k < 20; ++k) wu += mlp.layers[1].weight(o, k) * u[k];
            CHECK(std::abs(e.output_change[i * 6 + o] + a * wu) < 1e-12);
        }
    }
}

// The permutation test's counts against the plain loop it stands for:
// relabel (discovery, then held out, each from the last), recompute every
// unit's contrast in full, compare. Exact: the fast path must give the
// same bits. 37 units (a block of 8 and a narrower last one), values that
// are all floats (packed as floats) and values that are not.
TEST_CASE("permutation_test counts what relabelling and recomputing every contrast counts, bit for bit") {
    for (const bool floats : {true, false}) {
        CAPTURE(floats);
        Rng draw(11);
        const auto values = [&](std::size_t rows, std::size_t m) {
            analysis::HiddenValues H{rows, m, std::vector<double>(rows * m)};
            for (auto& x : H.h) x = floats ? static_cast<double>(static_cast<float>(draw.normal())) : draw.normal();
            return H;
        };
        const analysis::HiddenValues discovery = values(40, 37), held = values(30, 37);
        std::vector<char> label(40), held_label(30);
        for (std::size_t r = 0; r < 40; ++r) label[r] = r % 3 == 0;
        for (std::size_t r = 0; r < 30; ++r) held_label[r] = r < 12;
        const auto found = analysis::unit_contrasts(discovery, label), again = analysis::unit_contrasts(held, held_label);
        const std::vector<std::size_t> winners = {5, 36, 0};
        Rng shuffle(5), plain(5);
        const auto counts = analysis::permutation_test(discovery, label, found, held, held_label, again, winners, 150, shuffle);
        std::vector<std::size_t> own(3), max(3), in_held(3);
        std::vector<char> relabel = label, held_relabel = held_label;
        for (int p = 0; p < 150; ++p) {
            plain.shuffle(relabel);
            const auto c = analysis::unit_contrasts(discovery, relabel);
            plain.shuffle(held_relabel);
            const auto h = analysis::unit_contrasts(held, held_relabel);
            double largest = 0;
            for (double e : c.effect) largest = std::max(largest, std::abs(e));
            for (std::size_t w = 0; w < 3; ++w) {
                const std::size_t j = winners[w];
                const double sign = found.effect[j] >= 0 ? 1.0 : -1.0;
                max[w] += largest >= std::abs(found.effect[j]);
                own[w] += std::abs(c.effect[j]) >= std::abs(found.effect[j]);
                in_held[w] += sign * h.effect[j] >= sign * again.effect[j];
            }
        }
        CHECK(counts.beats_own == own);
        CHECK(counts.beats_max == max);
        CHECK(counts.beats_held == in_held);
        CHECK(shuffle.next_u64() == plain.next_u64());  // the same draws used
    }
}

TEST_CASE("unit_contrasts: the standardised difference of the group means, 0 for a unit constant within each group") {
    // Rows 0-1 in group a, 2-3 in b. Unit 0: a = (1, 3), b = (0, 2): means 2
    // and 1, sample variances 2 and 2, so (2 - 1) / sqrt((2 + 2) / 2) =
    // 1/sqrt(2). Unit 1: a = (5, 5), b = (1, 1): no spread, no contrast.
    // Unit 2: unit 0 with the groups' roles swapped, the sign flips.
    const analysis::HiddenValues H{4, 3, {1, 5, 0, 3, 5, 2, 0, 1, 1, 2, 1, 3}};
    const auto c = analysis::unit_contrasts(H, {1, 1, 0, 0});
    // Tolerance 1e-15: a few roundings of sums and one sqrt in float64.
    CHECK(c.mean_a[0] == 2);
    CHECK(c.mean_b[0] == 1);
    CHECK(c.effect[0] == doctest::Approx(1 / std::sqrt(2.0)).epsilon(1e-15));
    CHECK(c.mean_a[1] == 5);
    CHECK(c.mean_b[1] == 1);
    CHECK(c.effect[1] == 0);
    CHECK(c.effect[2] == doctest::Approx(-1 / std::sqrt(2.0)).epsilon(1e-15));
}
