#include <doctest/doctest.h>

#include "report/writers.h"
#include "runner/execute.h"
#include "toy_kind.h"

using namespace ffn::runner;

TEST_CASE("results are bitwise identical for any thread count and carry the swept values") {
    const std::vector<ExperimentKind> kinds = {ffn::test::toy_kind()};
    const Plan p = make_plan(Json::parse(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1, 2],
                                            "sweep": {"model.width": [1, 2, 3, 4, 5]}})"),
                             "cfg.json", {}, kinds);
    const auto one = execute(p, {1, {}, {}});
    const auto two = execute(p, {2, {}, {}});
    const auto four = execute(p, {4, {}, {}});
    const auto dump = [](const SweepResult& r) { return ffn::report::results_document("toy", r.tables, nullptr).dump(); };
    CHECK(dump(one) == dump(two));
    CHECK(dump(one) == dump(four));
    REQUIRE(one.tables.size() == 1);
    const auto& t = one.tables[0];
    CHECK(t.row_count() == 15);
    CHECK(t.columns()[0].name == "model.width");
    CHECK(t.columns()[1].name == "seed");
    CHECK(t.at(14, "model.width") == ffn::report::Cell{std::int64_t{5}});
    CHECK(one.manifest["runs"] == 15);
    CHECK(two.manifest["threads"] == 2);
}
