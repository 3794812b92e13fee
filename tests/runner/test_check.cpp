#include <doctest/doctest.h>

#include <filesystem>
#include <set>

#include "experiments/registry.h"
#include "io/atomic_file.h"
#include "report/table_io.h"
#include "core/error.h"
#include "runner/check.h"
#include "runner/config.h"
#include "runner/execute.h"
#include "support.h"

using namespace ffn::runner;
namespace fs = std::filesystem;

namespace {
// A scratch checkout holding one bundled config and its expected table.
struct ScratchRoot {
    ffn::test::TempDir dir;
    std::string config, expected;
    explicit ScratchRoot(const std::string& name = "abs", const std::string& kind = "abs_construction") {
        const std::string expected_folder = "experiments/" + kind + "/expected";
        fs::create_directories(dir.path() / "configs");
        fs::create_directories(dir.path() / expected_folder);
        config = dir.file("configs/" + name + ".json");
        expected = dir.file(expected_folder + "/" + name + ".json");
        fs::copy_file(ffn::test::source_path("configs/" + name + ".json"), config);
        fs::copy_file(ffn::test::source_path(expected_folder + "/" + name + ".json"), expected);
    }
    CheckOutcome check(bool update = false) {
        return check_config(config, dir.path().string(), update, ffn::experiments::all_kinds(), 1);
    }
};
}  // namespace

TEST_CASE("check passes on the committed expected table") {
    ScratchRoot root;
    const auto outcome = root.check();
    const std::string first = outcome.details.empty() ? "" : outcome.details[0];
    INFO(first);
    CHECK(outcome.status == CheckStatus::ok);
    CHECK(bundled_configs(root.dir.path().string()) == std::vector<std::string>{root.config});
}

TEST_CASE("check fails when one expected value is mutated and --update restores it") {
    ScratchRoot root;
    auto doc = ffn::report::Json::parse(ffn::io::read_file(root.expected));
    auto& grid = doc["tables"][2];
    REQUIRE(grid["name"] == "grid");
    // Rows are arrays in column order (an expected table's compact form).
    const auto& names = grid["columns"];
    const auto inputs = static_cast<std::size_t>(std::find(names.begin(), names.end(), "inputs") - names.begin());
    REQUIRE(grid["rows"][0][inputs] == 3721);  // 61 * 61
    grid["rows"][0][inputs] = 3722;
    ffn::io::write_file_atomically(root.expected, doc.dump(2));

    const auto outcome = root.check();
    CHECK(outcome.status == CheckStatus::differs);
    // A summary line first, then the cell (the config did not change, so no keys are named).
    REQUIRE(outcome.details.size() == 2);
    CHECK(outcome.details[0] == "1 cell differs in 1 row of 1 table (4 tables compared) (A = this run, B = expected)");
    CHECK(outcome.details[1].find("table 'grid' row dtype=float64 column 'inputs': A=3721 B=3722") != std::string::npos);

    CHECK(root.check(/*update=*/true).status == CheckStatus::updated);
    CHECK(root.check().status == CheckStatus::ok);
}

TEST_CASE("a per-item table is checked by its summary, and a difference there says where its rows are") {
    // tms_pentagon's features table (one row per feature of each model) is
    // kept as features_summary; nudging one summed-up cell fails the check.
    ScratchRoot root("tms_pentagon", "toy_superposition");
    REQUIRE(root.check().status == CheckStatus::ok);
    auto doc = ffn::report::Json::parse(ffn::io::read_file(root.expected));
    ffn::report::Json* summary = nullptr;
    for (auto& t : doc["tables"]) {
        CHECK(t["name"] != "features");  // no per-item rows in the file
        if (t["name"] == "features_summary") summary = &t;
    }
    REQUIRE(summary);
    const auto& names = (*summary)["columns"];
    const auto norm_max = static_cast<std::size_t>(std::find(names.begin(), names.end(), "norm_max") - names.begin());
    REQUIRE(norm_max < names.size());
    (*summary)["rows"][0][norm_max] = (*summary)["rows"][0][norm_max].get<double>() * 1.01;  // past rtol 1e-4
    ffn::io::write_file_atomically(root.expected, doc.dump(2));

    const auto outcome = root.check();
    CHECK(outcome.status == CheckStatus::differs);
    std::string all;
    for (const auto& d : outcome.details) all += d + "\n";
    CHECK(all.find("1 cell differs in 1 row of 1 table") != std::string::npos);
    CHECK(all.find("table 'features_summary' is table 'features' summed up per group (an expected table keeps no per-item rows); "
                   "`ffn-lab sweep " + root.config + " --out DIR` writes its rows") != std::string::npos);
    CHECK(all.find("column 'norm_max'") != std::string::npos);
}

TEST_CASE("an expected table written before summaries, its per-item rows whole and in object rows, still checks") {
    // A study folder's file of an earlier version: check sums its raw
    // features table up the same way, so it passes without --update.
    ScratchRoot root("tms_pentagon", "toy_superposition");
    const Plan plan = make_plan(load_config(root.config), root.config, {}, ffn::experiments::all_kinds());
    const SweepResult result = execute(plan, {1, {}, {}});
    const auto old = ffn::report::results_document(plan.kind->name, result.tables, Json{{"config", plan.config}});
    const auto features = std::find_if(old["tables"].begin(), old["tables"].end(), [](const Json& t) { return t["name"] == "features"; });
    REQUIRE(features != old["tables"].end());
    REQUIRE((*features)["rows"][0].is_object());
    ffn::io::write_file_atomically(root.expected, old.dump(2) + "\n");
    const auto outcome = root.check();
    INFO((outcome.details.empty() ? "" : outcome.details[0]));
    CHECK(outcome.status == CheckStatus::ok);
}

TEST_CASE("every table of every bundled expected file names each row once by its keys, so diff and check name rows by them") {
    // A table whose keys repeat (abs_construction's affine_fit was keyed by
    // dtype alone, four rows for two values) is matched and named by
    // position instead; one row is no table to key.
    std::size_t tables = 0;
    for (const auto& entry : fs::recursive_directory_iterator(ffn::test::source_path("experiments"))) {
        if (!entry.is_regular_file() || entry.path().parent_path().filename() != "expected") continue;
        for (const auto& t : ffn::report::read_tables(entry.path().string())) {
            CAPTURE(entry.path().string());
            CAPTURE(t.name());
            ++tables;
            if (t.row_count() < 2) continue;
            REQUIRE_FALSE(t.keys().empty());
            std::set<std::string> names;
            for (std::size_t r = 0; r < t.row_count(); ++r) {
                std::string name;
                for (const auto& k : t.keys()) name += ffn::report::format_cell(t.at(r, k), 0) + "\x1f";
                CHECK(names.insert(name).second);
            }
        }
    }
    CHECK(tables > 50);
}

TEST_CASE("the expected tables are small enough for a repository to carry: none over 1 MB, all under 5 MB") {
    std::uintmax_t total = 0, largest = 0;
    std::string largest_name;
    for (const auto& entry : fs::recursive_directory_iterator(ffn::test::source_path("experiments"))) {
        if (!entry.is_regular_file() || entry.path().parent_path().filename() != "expected") continue;
        total += entry.file_size();
        if (entry.file_size() > largest) largest = entry.file_size(), largest_name = entry.path().string();
    }
    INFO("largest: " << largest_name << " " << largest << " bytes; all: " << total);
    CHECK(largest <= 1'000'000);
    CHECK(total <= 5'000'000);
    CHECK(total > 0);
}

TEST_CASE("a missing expected table is an error that says how to create it") {
    ScratchRoot root;
    fs::remove(root.expected);
    const auto outcome = root.check();
    CHECK(outcome.status == CheckStatus::error);
    // The root is not the checkout here, so the command names it.
    CHECK(outcome.details[0].find("no expected table (run `ffn-lab check --root " + root.dir.path().string() + " --update ") != std::string::npos);
}

TEST_CASE("every bundled config says in its own file whether its check is long, as its bases make it") {
    // tests/CMakeLists.txt labels a config's check test long from the
    // file's own "check": {"long": ...}, without following its base: each
    // file must say what the resolved config says.
    const std::string root = ffn::test::source_path("");
    for (const auto& config : bundled_configs(root)) {
        CAPTURE(config);
        const Json own = load_json_file(config);
        const bool said = own.contains("check") && own["check"].value("long", false);
        const Plan plan = make_plan(load_config(config, (fs::path(root) / "configs").string()), config, {}, ffn::experiments::all_kinds());
        CHECK(said == plan.check_long);
    }
    // And the word is checked like any key.
    CHECK_THROWS_WITH_AS(make_plan(Json{{"experiment", "abs_construction"}, {"check", {{"long", "yes"}}}}, "c.json", {}, ffn::experiments::all_kinds()),
                         "c.json: check: key 'long': expected true or false, got \"yes\"", ffn::Error);
}
