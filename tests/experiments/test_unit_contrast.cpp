// unit_contrast (claim S7): the lab's discipline, asserted on short runs of
// the bundled config.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <set>
#include <string>

#include "experiments/run_config.h"
#include "experiments/support/planted_task.h"
#include "nn/mlp.h"
#include "nn/weights.h"

using namespace ffn;
using report::Cell;
using test::num;
using test::run_config;
using test::table;

namespace {

// One point of the sweep over seeds 0-3, trained for 1500 steps.
runner::SweepResult one_point(const std::string& groups, int group_samples, std::vector<std::string> more = {}) {
    std::vector<std::string> sets = {"sweep.features=[10]", "sweep.groups=[\"" + groups + "\"]",
                                     fmt::format("sweep.group_samples=[{}]", group_samples), "seeds=[0,1,2,3]", "steps=1500",
                                     "permutations=199"};
    sets.insert(sets.end(), more.begin(), more.end());
    return run_config("unit_contrast.json", sets);
}

}  // namespace

TEST_CASE("unit_contrast: between random groups the uncorrected test finds winners that the corrected one and held-out inputs do not") {
    const auto result = one_point("random", 256);
    const auto& t = table(result, "survival");
    REQUIRE(t.row_count() == 1);
    CHECK(num(t, 0, "winners") == 20);
    CHECK(num(t, 0, "naive_significant") >= 5);  // 9 here: chance, picked from 80
    CHECK(num(t, 0, "naive_significant") > num(t, 0, "significant") + 3);
    CHECK(num(t, 0, "survived") <= 1);
    // The corrected test holds the chance of any false winner in a seed at
    // alpha: the seeds with one are at most 2 of 4 (1 here, whose random
    // groups happen to differ in one feature's share; three units reading
    // it pass, and none of them replicates held out).
    const auto& chosen = table(result, "chosen");
    std::set<double> seeds_with_winner;
    for (std::size_t r = 0; r < chosen.row_count(); ++r) {
        if (num(chosen, r, "p_corrected") < 0.05) {
            seeds_with_winner.insert(num(chosen, r, "seed"));
            CHECK(chosen.at(r, "survived") == Cell{false});
        }
    }
    CHECK(seeds_with_winner.size() <= 2);
}

TEST_CASE("unit_contrast: a planted feature's units survive held out, read the feature, and their ablation obeys -h_j q.c_j") {
    const auto result = one_point("feature", 256);
    const auto& t = table(result, "survival");
    CHECK(num(t, 0, "survived") == 20);
    CHECK(num(t, 0, "survived_planted") >= 16);
    // float32 outputs of order 1: their rounding, about 1e-7, bounds the
    // gap between the recomputed and the predicted readout change.
    CHECK(num(t, 0, "identity_error_max") < 1e-5);
    const auto& chosen = table(result, "chosen");
    for (std::size_t r = 0; r < chosen.row_count(); ++r) {
        CHECK(chosen.at(r, "survived") == Cell{true});
        CHECK(num(chosen, r, "readout_change_a") < num(chosen, r, "readout_change_b"));  // zeroing lowers |s_0|'s readout where s_0 is
    }
}

TEST_CASE("unit_contrast: in float64 the ablation identity holds to 1e-12") {
    const auto result = one_point("feature", 64, {"dtype=\"float64\"", "seeds=[0]"});
    CHECK(num(table(result, "survival"), 0, "identity_error_max") < 1e-12);
}

TEST_CASE("unit_contrast: a model from a weights file, with groups given in the config") {
    // A 3-4-3 ReLU MLP whose unit 2 reads x0 and nothing else; the others
    // read x1 and x2. Group a's inputs have x0 in [1, 1.6], group b's in
    // [0, 0.3]; x1 and x2 run over the same values in both, so unit 2 tells
    // the groups apart, and zeroing it moves the readout q = e0 by
    // -h_2 q.c_2 = -0.5 x0.
    test::TempDir dir;
    nn::MLP<double> mlp({3, 4, 3}, nn::Activation::relu);
    const double up[4][3] = {{0, 1, 0}, {0, 0, 1}, {1, 0, 0}, {0, 1, 1}};
    for (std::size_t j = 0; j < 4; ++j) {
        for (std::size_t k = 0; k < 3; ++k) mlp.layers[0].weight(j, k) = up[j][k];
        mlp.layers[0].bias(j) = 0;
    }
    for (std::size_t k = 0; k < 3; ++k)
        for (std::size_t j = 0; j < 4; ++j) mlp.layers[1].weight(k, j) = k == 0 && j == 2 ? 0.5 : 0.1;
    for (std::size_t k = 0; k < 3; ++k) mlp.layers[1].bias(k) = 0;
    const std::string path = dir.file("model.safetensors");
    nn::save_weights(path, mlp);
    std::string a = "inputs_a=[", b = "inputs_b=[";
    for (int i = 0; i < 40; ++i) {
        const double x1 = (i % 7) * 0.25, x2 = ((i * 3) % 5) * 0.3;
        a += fmt::format("{}[{},{},{}]", i ? "," : "", 1 + (i % 4) * 0.2, x1, x2);
        b += fmt::format("{}[{},{},{}]", i ? "," : "", (i % 4) * 0.1, x1, x2);
    }
    const auto result = run_config("unit_contrast.json", {"weights=" + path, "sweep.features=[10]", "sweep.groups=[\"given\"]",
                                                          "sweep.group_samples=[16]", "seeds=[0]", "d=3", "m=4", "top=1",
                                                          "dtype=\"float64\"", a + "]", b + "]", "readout=[1,0,0]", "permutations=199"});
    const auto& chosen = table(result, "chosen");
    REQUIRE(chosen.row_count() == 1);
    CHECK(num(chosen, 0, "unit") == 2);
    CHECK(chosen.at(0, "survived") == Cell{true});
    // -0.5 x0 averaged over a shuffled half of each group: x0 lies in
    // [1, 1.6] in group a and [0, 0.3] in group b.
    CHECK(num(chosen, 0, "readout_change_a") <= -0.5);
    CHECK(num(chosen, 0, "readout_change_a") >= -0.8);
    CHECK(num(chosen, 0, "readout_change_b") <= 0);
    CHECK(num(chosen, 0, "readout_change_b") >= -0.15);
    CHECK(num(chosen, 0, "identity_error") < 1e-15);  // float64, a handful of exact products
    CHECK_FALSE(report::as_number(chosen.at(0, "best_feature")));  // no ground truth for a loaded model
    const auto& t = table(result, "survival");
    CHECK(t.at(0, "reading") == Cell{std::string("1 of 1 discovery winners survive held out")});
    CHECK(table(result, "runs").at(0, "status") == Cell{std::string("loaded")});
}

TEST_CASE("unit_contrast: settings that cannot make a test are refused before any run") {
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"permutations=99"}),
                      doctest::Contains("the held-out test of 5 winners on 16 + 16 inputs gives p >= 0.05, never below alpha = 0.05"));
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"alpha=0"}), doctest::Contains("key 'alpha': 0 is not a significance level"));
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"weights=/nonexistent.safetensors"}),
                      doctest::Contains("key 'groups': a model from 'weights' has no planted features"));
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"sweep.groups=[\"given\"]", "inputs_a=[[1,2]]", "inputs_b=[[1,2]]"}),
                      doctest::Contains("key 'inputs_a': 1 inputs; groups \"given\" need at least 4"));
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"sweep.groups=[\"given\"]", "d=2", "readout=[1,0]",
                                                        "inputs_a=[[1,2],[1,2],[1e300,2],[1,2]]", "inputs_b=[[1,2],[1,2],[1,2],[1,2]]"}),
                      doctest::Contains("key 'inputs_a': row 3 holds 1e+300, beyond what float32 can hold"));
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"inputs_a=[[1,2]]"}),
                      doctest::Contains("key 'inputs_a': inputs are read only with groups \"given\""));
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"readout=[1,2]"}), doctest::Contains("key 'readout': 2 values, but the model writes d = 20"));
}

TEST_CASE("unit_contrast: a feature or a unit count beyond the model is refused before any run") {
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"feature=10", "sweep.features=[10]"}),
                      doctest::Contains("key 'feature': 10 is not one of the 10 planted features (0 to 9)"));
    CHECK_THROWS_WITH(run_config("unit_contrast.json", {"top=81"}), doctest::Contains("key 'top': 81 units cannot be chosen from the 80"));
}

// The runs of a seed that differ only in how they read the model share one
// training (planted::shared_training): the same object for them, another
// for a run whose training differs, and the bits of a training of its own.
TEST_CASE("unit_contrast: runs that differ only in their groups share one trained model, the bits of their own training") {
    const auto plan_of = [](const std::string& lr) {
        std::vector<runner::Override> sets;
        for (const std::string& s : std::vector<std::string>{"sweep.features=[10]", "sweep.groups=[\"feature\", \"random\"]", "sweep.group_samples=[16]",
                                    "seeds=[5]", "steps=40", "train_samples=512", "probe_samples=256", "lr=" + lr})
            sets.push_back(runner::parse_override(s));
        const auto path = test::source_path("configs/unit_contrast.json");
        return runner::make_plan(runner::load_config(path), path, sets, experiments::all_kinds());
    };
    const runner::Plan plan = plan_of("0.003"), other = plan_of("0.002");
    REQUIRE(plan.runs.size() == 2);
    const auto a = experiments::planted::shared_training<float>(plan.runs[0]);
    const auto b = experiments::planted::shared_training<float>(plan.runs[1]);
    const auto c = experiments::planted::shared_training<float>(other.runs[0]);
    CHECK(a.get() == b.get());
    CHECK(a.get() != c.get());
    const auto task = experiments::planted::make_task<float>(plan.runs[1]);
    auto mlp = experiments::planted::make_model<float>(plan.runs[1]);
    const auto record = experiments::planted::train_model(plan.runs[1], mlp, task);
    CHECK(record.status == a->record.status);
    for (std::size_t l = 0; l < mlp.layers.size(); ++l) {
        CHECK(mlp.layers[l].weight == a->mlp.layers[l].weight);
        CHECK(mlp.layers[l].bias == a->mlp.layers[l].bias);
    }
    CHECK(a->task.x_probe == task.x_probe);
}
