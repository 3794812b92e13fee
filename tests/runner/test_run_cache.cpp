// runner::RunCache: a run's tables come back exactly as stored (NaN and
// the infinities included, which results files write as null), only for
// the same run, and a damaged entry is no entry. The resume behaviour of
// a whole sweep is tests/cli/resume.sh.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <limits>

#include "report/table_io.h"
#include "runner/execute.h"
#include "runner/run_cache.h"
#include "toy_kind.h"

using namespace ffn::runner;
namespace fs = std::filesystem;

namespace {

Plan toy_plan(const char* json) {
    static const std::vector<ExperimentKind> kinds = {ffn::test::toy_kind()};
    return make_plan(Json::parse(json), "cfg.json", {}, kinds);
}

fs::path fresh_folder(const char* name) {
    const fs::path dir = fs::temp_directory_path() / name;
    fs::remove_all(dir);
    return dir;
}

}  // namespace

TEST_CASE("RunCache: tables come back bit for bit, NaN and infinities included") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [3]})");
    const RunCache cache(fresh_folder("ffnlab_run_cache_bits").string());
    ffn::report::Table t("result");
    t.add_column("x", ffn::report::ColumnType::real).add_column("n", ffn::report::ColumnType::integer);
    t.add_column("s", ffn::report::ColumnType::text).add_column("b", ffn::report::ColumnType::boolean);
    t.add_key("n");
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> xs = {0.1, -0.0, std::numeric_limits<double>::quiet_NaN(), inf, -inf, 5e-324, 1.0 / 3};
    for (std::size_t i = 0; i < xs.size(); ++i)
        t.add_row({xs[i], static_cast<std::int64_t>(i), std::string("run ") + std::to_string(i), i % 2 == 0});
    t.add_row({ffn::report::Cell{}, std::int64_t{-7}, ffn::report::Cell{}, ffn::report::Cell{}});
    REQUIRE(cache.store(cache.key("toy", plan.runs[0]), "toy", plan.runs[0], {t}));
    const auto back = cache.load("toy", plan.runs[0]);
    REQUIRE(back);
    REQUIRE(back->size() == 1);
    const auto& u = back->front();
    CHECK(u.keys() == t.keys());
    REQUIRE(u.row_count() == t.row_count());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double got = std::get<double>(u.at(i, "x"));
        CHECK(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(std::isnan(xs[i]) ? got : xs[i]));
        if (std::isnan(xs[i])) CHECK(std::isnan(got));
        CHECK(u.at(i, "s") == t.at(i, "s"));
        CHECK(u.at(i, "b") == t.at(i, "b"));
    }
    CHECK(ffn::report::is_null(u.at(xs.size(), "x")));
    CHECK(ffn::report::results_document("toy", {u}, nullptr) == ffn::report::results_document("toy", {t}, nullptr));
}

TEST_CASE("RunCache: another run, another kind or a damaged file finds no entry") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1]})");
    const Plan other_lr = toy_plan(R"({"experiment": "toy", "lr": 2, "seeds": [0, 1]})");
    const fs::path dir = fresh_folder("ffnlab_run_cache_keys");
    const RunCache cache(dir.string());
    ffn::report::Table t("result");
    t.add_column("x", ffn::report::ColumnType::real);
    t.add_row({1.5});
    REQUIRE(cache.store(cache.key("toy", plan.runs[0]), "toy", plan.runs[0], {t}));
    CHECK(cache.load("toy", plan.runs[0]));
    CHECK_FALSE(cache.load("toy", plan.runs[1]));      // another seed
    CHECK_FALSE(cache.load("toy", other_lr.runs[0]));  // another value
    CHECK_FALSE(cache.load("other", plan.runs[0]));    // another kind
    CHECK(cache.key("toy", plan.runs[0]) != cache.key("toy", other_lr.runs[0]));
    // A file cut short by a crash of the disk (write_file_atomically never
    // leaves one) is no entry: the run is computed again.
    const fs::path entry = dir / (cache.key("toy", plan.runs[0]) + ".json");
    std::ofstream(entry) << "{\"format\": 1, \"experi";
    CHECK_FALSE(cache.load("toy", plan.runs[0]));
    // An entry whose values are not the run's (a hash collision, or a file
    // copied in by hand) is no entry either.
    REQUIRE(cache.store(cache.key("toy", other_lr.runs[0]), "toy", other_lr.runs[0], {t}));
    fs::copy_file(dir / (cache.key("toy", other_lr.runs[0]) + ".json"), entry, fs::copy_options::overwrite_existing);
    CHECK_FALSE(cache.load("toy", plan.runs[0]));
}

TEST_CASE("execute with a cache: a second run reuses every run and gives the same tables") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1, 2], "sweep": {"model.width": [1, 2]}})");
    const std::string dir = fresh_folder("ffnlab_run_cache_execute").string();
    const auto first = execute(plan, {.threads = 2, .cache = dir});
    const auto second = execute(plan, {.threads = 1, .cache = dir});
    const auto fresh = execute(plan, {.threads = 1, .cache = dir, .fresh = true});
    CHECK(first.manifest["runs_reused"] == 0);
    CHECK(first.manifest["runs_computed"] == 6);
    CHECK(second.manifest["runs_reused"] == 6);
    CHECK(fresh.manifest["runs_reused"] == 0);
    const auto dump = [](const SweepResult& r) { return ffn::report::results_document("toy", r.tables, nullptr).dump(); };
    CHECK(dump(first) == dump(second));
    CHECK(dump(first) == dump(fresh));
    // A run that writes artifacts is never reused: a reused run writes no files.
    const auto with_files = execute(plan, {.threads = 1, .artifacts = fresh_folder("ffnlab_run_cache_files").string(), .cache = dir});
    CHECK(with_files.manifest["runs_reused"] == 0);
}

// A run's tables are filed under the weights file's bytes as the run read
// them: a file rewritten while the run trains (here, by the run itself) is
// another input, so the next sweep computes again instead of reusing
// tables that came from the old bytes.
TEST_CASE("execute with a cache: a weights file rewritten during the run is not filed under its new bytes") {
    const fs::path weights = fresh_folder("ffnlab_run_cache_weights.bin");
    { std::ofstream(weights) << "first bytes"; }
    ffn::runner::Schema schema{{"weights", KeyType::string, "", {}, {}, {}, "a file the run reads"}};
    auto run = [](const Run& r) {
        std::ifstream in(r.string("weights"));
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(r.string("weights")) << "other bytes, written while the run trains";
        ffn::report::Table t("result");
        t.add_column("bytes", ffn::report::ColumnType::integer);
        t.add_row({static_cast<std::int64_t>(bytes.size())});
        return std::vector<ffn::report::Table>{t};
    };
    static const std::vector<ExperimentKind> kinds = {{.name = "reader", .description = "reads a file", .schema = schema, .run = run}};
    Json config = Json::parse(R"({"experiment": "reader", "seeds": [0]})");
    config["weights"] = weights.string();
    const Plan plan = make_plan(config, "cfg.json", {}, kinds);
    const std::string dir = fresh_folder("ffnlab_run_cache_weights_cache").string();
    const auto first = execute(plan, {.threads = 1, .cache = dir});
    const auto second = execute(plan, {.threads = 1, .cache = dir});
    CHECK(first.manifest["runs_computed"] == 1);
    CHECK(second.manifest["runs_reused"] == 0);  // the file now holds other bytes
    CHECK(second.manifest["runs_computed"] == 1);
}
