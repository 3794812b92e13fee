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

TEST_CASE("planted_features: without training, the trained units are the initial ones and none moved") {
    auto sets = kOnePoint;
    sets.push_back("steps=0");
    const auto result = run_config("planted_features.json", sets);
    const auto& t = table(result, "init_vs_trained");
    REQUIRE(t.row_count() == 4);
    for (const char* metric : {"firing", "selectivity", "features", "alignment"}) {
        const std::size_t r = row_of(t, metric);
        CHECK(t.at(r, "init_median") == t.at(r, "trained_median"));
        CHECK(t.at(r, "init_q10") == t.at(r, "trained_q10"));
        CHECK(num(t, r, "seeds_moved") == 0);
        CHECK(num(t, r, "seeds") == 3);
        CHECK(num(t, r, "init_units") <= 3 * 80);
    }
    CHECK(table(result, "units").row_count() == 3 * 2 * 80);  // seeds x stages x units
}

TEST_CASE("planted_features: trained on |strength| without superposition, ReLU units become selective in every seed") {
    auto sets = kOnePoint;
    sets.push_back("steps=1500");
    const auto result = run_config("planted_features.json", sets);
    const auto& t = table(result, "init_vs_trained");
    const std::size_t sel = row_of(t, "selectivity"), feat = row_of(t, "features");
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

TEST_CASE("planted_features: a density of 0 is refused before any run") {
    CHECK_THROWS_WITH(run_config("planted_features.json", {"density=0"}),
                      doctest::Contains("key 'density': 0 plants no feature in any input"));
}
