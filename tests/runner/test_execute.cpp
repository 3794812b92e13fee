#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "report/table_io.h"
#include "runner/aggregation.h"
#include "runner/execute.h"
#include "runner/run_rows.h"
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

namespace {
// The toy kind with a run table of every column type, a null and a text
// that repeats, joined into seed statistics (through run_cell) and the
// runs table.
ExperimentKind typed_kind(bool one_row_runs) {
    ExperimentKind kind = ffn::test::toy_kind();
    kind.run = [](const Run& r) {
        ffn::report::Table t("result");
        t.add_column("width", ffn::report::ColumnType::integer)
            .add_column("draw", ffn::report::ColumnType::real)
            .add_column("odd", ffn::report::ColumnType::boolean)
            .add_column("status", ffn::report::ColumnType::text);
        ffn::Rng rng = ffn::Rng::stream(r.seed, r.id, "draw");
        const std::int64_t w = r.integer("model.width");
        t.add_row({w, w == 2 ? ffn::report::Cell{} : ffn::report::Cell{rng.uniform01()}, w % 2 == 1,
                   std::string(w == 2 ? "diverged" : "ok")});
        return std::vector<ffn::report::Table>{t};
    };
    const SeedStatistics spec{.table = "summary", .keys = {}, .columns = {{"draw", "draw", {Statistic::mean, Statistic::max}}}};
    kind.aggregate = [spec](Aggregation& a) { return std::vector{a.summarize_seeds(spec), a.take_per_run_rows()}; };
    kind.one_row_runs = one_row_runs;
    return kind;
}
}  // namespace

TEST_CASE("a kind of one-row runs gives, from the compact store, the tables it gives from Tables") {
    const auto config = Json::parse(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1, 2], "sweep": {"model.width": [1, 2, 3]}})");
    const std::vector<ExperimentKind> tables_kind = {typed_kind(false)}, compact_kind = {typed_kind(true)};
    const Plan held = make_plan(config, "cfg.json", {}, tables_kind), compact = make_plan(config, "cfg.json", {}, compact_kind);
    const auto dump = [](const SweepResult& r) { return ffn::report::results_document("toy", r.tables, nullptr).dump(); };
    const SweepResult expected = execute(held, {1, {}, {}});
    for (const std::size_t threads : {1, 2}) {
        const SweepResult got = execute(compact, {threads, {}, {}});
        REQUIRE(got.tables.size() == 2);
        CHECK(got.tables[1].row_count() == 9);
        CHECK(ffn::report::to_csv(got.tables[1]) == ffn::report::to_csv(expected.tables[1]));
        CHECK(dump(got) == dump(expected));
    }
    CHECK(expected.tables[1].at(4, "status") == ffn::report::Cell{std::string("diverged")});
    CHECK(ffn::report::is_null(expected.tables[1].at(4, "draw")));
    CHECK(expected.tables[1].at(7, "odd") == ffn::report::Cell{true});
}

TEST_CASE("the compact store refuses a run of other than one row, or of other columns") {
    const std::vector<ExperimentKind> kinds = {typed_kind(true)};
    const Plan p = make_plan(Json::parse(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1]})"), "cfg.json", {}, kinds);
    RunRows rows(p);
    ffn::report::Table two("result");
    two.add_column("a", ffn::report::ColumnType::integer);
    two.add_row({std::int64_t{1}});
    two.add_row({std::int64_t{2}});
    CHECK_THROWS_AS(rows.put(0, two), std::logic_error);
    ffn::report::Table one("result");
    one.add_column("a", ffn::report::ColumnType::integer);
    one.add_row({std::int64_t{7}});
    rows.put(0, one);
    CHECK(rows.cell(0, 0) == ffn::report::Cell{std::int64_t{7}});
    CHECK(ffn::report::is_null(rows.cell(1, 0)));  // never put
    ffn::report::Table other("result");
    other.add_column("b", ffn::report::ColumnType::integer);
    other.add_row({std::int64_t{1}});
    CHECK_THROWS_AS(rows.put(1, other), std::logic_error);
}
