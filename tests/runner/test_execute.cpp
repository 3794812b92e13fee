#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "report/table_io.h"
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

TEST_CASE("declared seed statistics: one row per grid point, each statistic over its seeds") {
    ExperimentKind kind = ffn::test::toy_kind();
    // "draw" is lr * U(0,1) per seed; width is the same for every seed.
    kind.seed_statistics = SeedStatistics{.table = "summary",
                                          .keys = {"lr", "model.activation"},
                                          .columns = {{"draw", "draw", {Statistic::mean, Statistic::sd, Statistic::median,
                                                                         Statistic::min, Statistic::max}},
                                                      {"width", "w", {Statistic::mean, Statistic::sd}}}};
    const std::vector<ExperimentKind> kinds = {kind};
    const Plan p = make_plan(Json::parse(R"({"experiment": "toy", "lr": 2, "seeds": [0, 1, 2, 3],
                                            "sweep": {"model.width": [3, 5]}})"),
                             "cfg.json", {}, kinds);
    const auto result = execute(p, {2, {}, {}});
    REQUIRE(result.tables.size() == 1);
    const auto& t = result.tables[0];
    CHECK(t.name() == "summary");
    REQUIRE(t.row_count() == 2);
    std::vector<std::string> names;
    for (const auto& c : t.columns()) names.push_back(c.name);
    CHECK(names == std::vector<std::string>{"model.width", "lr", "model.activation", "seeds", "draw_mean", "draw_sd",
                                            "draw_median", "draw_min", "draw_max", "w_mean", "w_sd"});
    // Recompute the width-5 row's statistics from the runs themselves
    // (summation in seed order, as the runner's): exact equality.
    const auto runs = execute(make_plan(Json::parse(R"({"experiment": "toy", "lr": 2, "seeds": [0, 1, 2, 3], "model.width": 5})"),
                                        "cfg.json", {}, {ffn::test::toy_kind()}),
                              {1, {}, {}});
    std::vector<double> draws;
    for (std::size_t r = 0; r < 4; ++r) draws.push_back(*ffn::report::as_number(runs.tables[0].at(r, "draw")));
    double sum = 0;
    for (double d : draws) sum += d;
    const double mean = sum / 4;
    double ss = 0;
    for (double d : draws) ss += (d - mean) * (d - mean);
    std::vector<double> sorted = draws;
    std::sort(sorted.begin(), sorted.end());
    CHECK(t.at(1, "seeds") == ffn::report::Cell{std::int64_t{4}});
    CHECK(t.at(1, "draw_mean") == ffn::report::Cell{mean});
    CHECK(t.at(1, "draw_sd") == ffn::report::Cell{std::sqrt(ss / 3)});  // sample sd, ddof = 1
    CHECK(t.at(1, "draw_median") == ffn::report::Cell{0.5 * (sorted[1] + sorted[2])});
    CHECK(t.at(1, "draw_min") == ffn::report::Cell{sorted.front()});
    CHECK(t.at(1, "draw_max") == ffn::report::Cell{sorted.back()});
    CHECK(t.at(1, "w_mean") == ffn::report::Cell{5.0});
    CHECK(t.at(1, "w_sd") == ffn::report::Cell{0.0});
    CHECK(t.at(1, "lr") == ffn::report::Cell{std::int64_t{2}});
}
