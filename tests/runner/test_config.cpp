#include <doctest/doctest.h>

#include <fstream>

#include "core/error.h"
#include "core/hash.h"
#include "runner/config.h"
#include "support.h"
#include "toy_kind.h"

using namespace ffn::runner;

namespace {
const std::vector<ExperimentKind>& kinds() {
    static const std::vector<ExperimentKind> k = {ffn::test::toy_kind()};
    return k;
}
Plan plan(const std::string& json, const std::vector<std::string>& sets = {}) {
    std::vector<Override> overrides;
    for (const auto& s : sets) overrides.push_back(parse_override(s));
    return make_plan(Json::parse(json), "cfg.json", overrides, kinds());
}
std::string error_of(const std::string& json, const std::vector<std::string>& sets = {}) {
    try {
        plan(json, sets);
    } catch (const ffn::Error& e) {
        CHECK(e.code() == ffn::ExitCode::bad_input);
        return e.what();
    }
    return "(no error)";
}
}  // namespace

TEST_CASE("a valid config resolves defaults nested and dotted keys alike") {
    const Plan p = plan(R"({"experiment": "toy", "lr": 0.5, "model": {"activation": "gelu"}})");
    REQUIRE(p.runs.size() == 1);
    CHECK(p.runs[0].integer("model.width") == 4);
    CHECK(p.runs[0].string("model.activation") == "gelu");
    CHECK(p.runs[0].string("dtype") == "float64");
    CHECK(plan(R"({"experiment": "toy", "lr": 0.5, "model.width": 9})").runs[0].integer("model.width") == 9);
}

TEST_CASE("each error class names the file the key and what was expected") {
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "model": {"widht": 3}})") ==
          "cfg.json: key 'model.widht': unknown key for experiment 'toy' (did you mean 'model.width'?)");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "model": {"width": "four"}})") ==
          "cfg.json: key 'model.width': expected an integer in [1, 1024], got \"four\"");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "model": {"width": 0}})") ==
          "cfg.json: key 'model.width': expected an integer in [1, 1024], got 0");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "model": {"activation": "tanh"}})") ==
          "cfg.json: key 'model.activation': expected one of relu, gelu, got \"tanh\"");
    CHECK(error_of(R"({"experiment": "toy"})") == "cfg.json: key 'lr': required, a number (learning rate)");
    CHECK(error_of(R"({"experiment": "tyo", "lr": 1})").find("unknown experiment kind 'tyo' (did you mean 'toy'?)") !=
          std::string::npos);
    CHECK(error_of(R"({"lr": 1})").find("key 'experiment': required") != std::string::npos);
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "dtype": "float16"})") ==
          "cfg.json: key 'dtype': expected one of float32, float64, got \"float16\"");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "seeds": [1, 1]})") == "cfg.json: key 'seeds': the list repeats a seed");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "sweep": {"model.width": []}})") ==
          "cfg.json: sweep key 'model.width': expected a non-empty list of values, got []");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "sweep": {"model.width": [2, "x"]}})") ==
          "cfg.json: sweep: key 'model.width': expected an integer in [1, 1024], got \"x\"");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "expect": [{"table": "t", "valeus": {}}]})") ==
          "cfg.json: expect[0]: unknown key 'valeus' (did you mean 'values'?)");
}

TEST_CASE("a malformed JSON file is reported with its line and column") {
    ffn::test::TempDir dir;
    std::ofstream(dir.file("bad.json")) << "{\n  \"experiment\": \"toy\",\n  \"lr\": 1,,\n}\n";
    try {
        load_json_file(dir.file("bad.json"));
        FAIL("no error");
    } catch (const ffn::Error& e) {
        CHECK(std::string(e.what()).find("bad.json:3:") != std::string::npos);
        CHECK(std::string(e.what()).find("invalid JSON") != std::string::npos);
    }
    CHECK_THROWS_WITH(load_json_file(dir.file("none.json")), doctest::Contains("none.json: cannot open file"));
}

TEST_CASE("overrides parse JSON values fall back to strings and are validated") {
    CHECK(parse_override("model.width=8").value == 8);
    CHECK(parse_override("model.activation=gelu").value == "gelu");
    CHECK(parse_override("points=[1, 2.5]").value == Json::parse("[1, 2.5]"));
    CHECK_THROWS_WITH(parse_override("model.width"), "--set 'model.width': expected key.path=value");
    const Plan p = plan(R"({"experiment": "toy", "lr": 1, "sweep": {"model.width": [1, 2]}})", {"model.width=16", "lr=0.25"});
    REQUIRE(p.runs.size() == 1);  // a --set fixes a swept key
    CHECK(p.runs[0].integer("model.width") == 16);
    CHECK(p.runs[0].number("lr") == 0.25);
    CHECK(error_of(R"({"experiment": "toy", "lr": 1})", {"model.widht=3"}) ==
          "--set: key 'model.widht': unknown key for experiment 'toy' (did you mean 'model.width'?)");
    CHECK(error_of(R"({"experiment": "toy", "lr": 1})", {"model.width=-3"}) ==
          "--set model.width: key 'model.width': expected an integer in [1, 1024], got -3");
    CHECK(plan(R"({"experiment": "toy", "lr": 1})", {"sweep.model.width=[3, 5]"}).runs.size() == 2);
}

TEST_CASE("sweep expands as a cartesian product first key slowest seeds innermost") {
    const Plan p = plan(R"({"experiment": "toy", "lr": 1, "seeds": [7, 8],
                            "sweep": {"model.width": [2, 4], "model.activation": ["relu", "gelu"]}})");
    REQUIRE(p.runs.size() == 8);
    const std::vector<std::tuple<int, std::string, int>> want = {
        {2, "relu", 7}, {2, "relu", 8}, {2, "gelu", 7}, {2, "gelu", 8},
        {4, "relu", 7}, {4, "relu", 8}, {4, "gelu", 7}, {4, "gelu", 8}};
    for (std::size_t i = 0; i < want.size(); ++i) {
        CHECK(p.runs[i].integer("model.width") == std::get<0>(want[i]));
        CHECK(p.runs[i].string("model.activation") == std::get<1>(want[i]));
        CHECK(p.runs[i].seed == static_cast<std::uint64_t>(std::get<2>(want[i])));
    }
    CHECK(p.swept_keys == std::vector<std::string>{"model.width", "model.activation", "seed"});
    // Run ids differ for every resolved config and are stable.
    CHECK(p.runs[0].id != p.runs[1].id);
    CHECK(p.runs[0].id == plan(R"({"experiment": "toy", "lr": 1, "model": {"width": 2}, "seeds": [7]})").runs[0].id);
}

// A run is a point of the grid and a seed; its id is the hash of the kind
// and its whole resolved values, taken from the point's precomputed part.
TEST_CASE("runs share their grid point, and each id is the hash of the kind and the run's values") {
    const Plan p = plan(R"({"experiment": "toy", "lr": 1, "seeds": [0, 7, 12345678901],
                            "zip": {"model.width": [1, 2], "lr": [0.1, 0.2]}, "sweep": {"model.activation": ["relu", "gelu"]}})");
    REQUIRE(p.runs.size() == 12);
    REQUIRE(p.points.size() == 4);
    for (const Run& r : p.runs) {
        CHECK(r.point == p.points[r.index / 3]);
        CHECK(r.id == ffn::fnv1a64("toy\n" + r.values().dump()));
        CHECK(r.values()["seed"] == r.seed);
        CHECK(r.swept().back() == std::pair<std::string, Json>{"seed", r.seed});
    }
    // Plan memory grows with the points, not with copies of them per seed.
    CHECK(sizeof(Run) <= 96);
}

TEST_CASE("zip pairs its lists into one axis outside the sweep") {
    const Plan p = plan(R"({"experiment": "toy", "lr": 1, "zip": {"model.width": [1, 2, 3], "lr": [0.1, 0.2, 0.3]},
                            "sweep": {"model.activation": ["relu", "gelu"]}})");
    REQUIRE(p.runs.size() == 6);
    CHECK(p.runs[0].integer("model.width") == 1);
    CHECK(p.runs[0].number("lr") == 0.1);
    CHECK(p.runs[1].string("model.activation") == "gelu");
    CHECK(p.runs[5].integer("model.width") == 3);
    CHECK(p.runs[5].number("lr") == 0.3);
    CHECK(error_of(R"({"experiment": "toy", "lr": 1, "zip": {"model.width": [1, 2], "lr": [0.1]}})") ==
          "cfg.json: zip key 'lr': has 1 values, 'model.width' has 2 (zip lists must have equal length)");
}
