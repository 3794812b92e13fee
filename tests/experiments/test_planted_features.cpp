// planted_features (claim S6): what training does to the units, asserted on
// short runs of the bundled config.
#include <doctest/doctest.h>

#include <string>

#include "experiments/run_config.h"

using namespace ffn;
using report::Cell;
using test::run_config;
using test::num;
using test::table;

namespace {


// The init_vs_trained row of `metric` at the only swept point.
std::size_t row_of(const report::Table& t, const std::string& metric) {
    for (std::size_t r = 0; r < t.row_count(); ++r)
        if (t.at(r, "metric") == Cell{metric}) return r;
    FAIL("no row for " << metric);
    return 0;
}

const std::vector<std::string> kOnePoint = {"sweep.features=[10]", "sweep.target=[\"abs\"]", "sweep.activation=[\"relu\"]",
                                            "seeds=[0,1,2]"};

}  // namespace

TEST_CASE("planted_features: without training, the trained units are the initial ones, and no seed counts as learned") {
    auto sets = kOnePoint;
    sets.push_back("steps=0");
    const auto result = run_config("planted_features.json", sets);
    const auto& runs = table(result, "runs");
    REQUIRE(runs.row_count() == 3);
    for (std::size_t r = 0; r < 3; ++r) {
        for (const char* metric : {"firing", "selectivity", "features_per_unit", "alignment"})
            CHECK(runs.at(r, std::string(metric) + "_init") == runs.at(r, std::string(metric) + "_trained"));
        CHECK(runs.at(r, "learned") == Cell{false});  // an untrained model does worse than the mean
    }
    const auto& units = table(result, "units");
    REQUIRE(units.row_count() == 3 * 2 * 80);  // seeds x stages x units
    for (std::size_t r = 0; r < units.row_count(); r += 160)
        for (std::size_t j = 0; j < 80; ++j) CHECK(units.at(r + j, "selectivity") == units.at(r + 80 + j, "selectivity"));
    const auto& t = table(result, "init_vs_trained");
    REQUIRE(t.row_count() == 4);
    for (const char* metric : {"firing", "selectivity", "features_per_unit", "alignment"}) {
        CHECK(num(t, row_of(t, metric), "seeds") == 0);
        CHECK(num(t, row_of(t, metric), "not_learned") == 3);
    }
}

TEST_CASE("planted_features: the per-unit table names each unit's point, the number of planted features among it") {
    // A metric once shared the swept key's name, and the units table then
    // showed the metric where the point's features should have been.
    const auto result = run_config("planted_features.json", {"sweep.target=[\"abs\"]", "sweep.activation=[\"relu\"]", "seeds=[0]", "steps=0"});
    const auto& units = table(result, "units");
    REQUIRE(units.row_count() == 2 * 2 * 80);  // points x stages x units
    CHECK(units.at(0, "features") == Cell{std::int64_t{10}});
    CHECK(units.at(units.row_count() - 1, "features") == Cell{std::int64_t{40}});
    CHECK(units.find_column("features_per_unit").has_value());
}

TEST_CASE("planted_features: every unit has a firing share and an alignment, selectivity only where a probe moves it") {
    auto sets = kOnePoint;
    sets.push_back("steps=300");
    const auto result = run_config("planted_features.json", sets);
    const auto& t = table(result, "init_vs_trained");
    CHECK(num(t, row_of(t, "firing"), "init_units") == 3 * 80);
    CHECK(num(t, row_of(t, "alignment"), "trained_units") == 3 * 80);
    CHECK(num(t, row_of(t, "selectivity"), "init_units") <= 3 * 80);
    CHECK(t.at(row_of(t, "selectivity"), "init_units") == t.at(row_of(t, "features_per_unit"), "init_units"));
}

TEST_CASE("planted_features: trained on |strength| without superposition, ReLU units become selective in every seed") {
    auto sets = kOnePoint;
    sets.push_back("steps=1500");
    const auto result = run_config("planted_features.json", sets);
    const auto& t = table(result, "init_vs_trained");
    const std::size_t sel = row_of(t, "selectivity"), feat = row_of(t, "features_per_unit");
    CHECK(num(t, sel, "seeds_moved") == 3);
    CHECK(num(t, sel, "trained_median") > 1.5 * num(t, sel, "init_median"));  // 0.25 -> 0.55 in 1500 steps
    CHECK(num(t, feat, "trained_median") == 1);
    const auto& runs = table(result, "runs");
    for (std::size_t r = 0; r < runs.row_count(); ++r) CHECK(num(runs, r, "probe_nmse") < 0.05);
}

TEST_CASE("planted_features: the linear control is fitted without making units selective") {
    const auto result = run_config("planted_features.json", {"sweep.features=[40]", "sweep.target=[\"strength\"]",
                                                             "sweep.activation=[\"relu\"]", "seeds=[0,1]", "steps=1500"});
    const auto& t = table(result, "init_vs_trained");
    CHECK(num(t, row_of(t, "selectivity"), "seeds_moved") == 0);
    CHECK(num(t, row_of(t, "firing"), "trained_median") > 0.9);  // the units work as a linear map
    const auto& runs = table(result, "runs");
    for (std::size_t r = 0; r < runs.row_count(); ++r) CHECK(num(runs, r, "probe_nmse") < 0.01);
}

TEST_CASE("planted_features: a model that diverged or learned nothing is left out, and said to be") {
    auto sets = kOnePoint;
    sets.insert(sets.end(), {"steps=200", "lr=1e37"});
    const auto result = run_config("planted_features.json", sets);
    const auto& runs = table(result, "runs");
    for (std::size_t r = 0; r < runs.row_count(); ++r) {
        CHECK(runs.at(r, "learned") == Cell{false});
        CHECK_FALSE(report::as_number(runs.at(r, "selectivity_trained")));
    }
    const auto& t = table(result, "init_vs_trained");
    const std::size_t sel = row_of(t, "selectivity");
    CHECK(num(t, sel, "seeds") == 0);
    CHECK(num(t, sel, "not_learned") == 3);
    CHECK(num(t, sel, "seeds_moved") == 0);
}

TEST_CASE("planted_features: a density of 0 is refused before any run") {
    CHECK_THROWS_WITH(run_config("planted_features.json", {"density=0"}),
                      doctest::Contains("key 'density': 0 plants no feature in any input"));
}
