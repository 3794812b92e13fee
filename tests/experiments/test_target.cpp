// width_sweep's target expressions: muparser's grammar with ffn::math's
// functions and operators (experiments/width_sweep/target.cpp), which must
// read as muparser's own did.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "core/math.h"
#include "experiments/width_sweep/target.h"

using ffn::experiments::width_sweep::TargetFunction;

namespace {
double at(const std::string& expression, double x) {
    TargetFunction f(expression, "target");
    return f(x);
}
}  // namespace

TEST_CASE("target expressions keep muparser's precedence and associativity") {
    CHECK(at("2^3^2", 0) == 512);          // ^ is right-associative
    CHECK(at("-x^2", 3) == -9);            // the sign binds looser than ^
    CHECK(at("1 + 2 * 3 - 4 / 2", 0) == 5);
    CHECK(at("x < 0 ? -x : x", -1.5) == 1.5);
    CHECK(at("(x > 0 && x < 1) * x", 0.5) == 0.5);
    CHECK(at("(x > 0 || x < -1) + (x == 2) + (x != 2) + (x <= 2) + (x >= 3)", 2) == 3);
    CHECK(at("abs(x) + min(x, 0) + max(x, 1) + sum(1, 2, 3)", -2) == 7);
    CHECK(at("1e-3 * x", 2) == 0.002);
}

TEST_CASE("target functions are ffn::math's, bit for bit") {
    // Exact equality: the expression calls the very function named.
    CHECK(at("sin(3*x)", 0.7) == ffn::math::sin(3 * 0.7));
    CHECK(at("exp(-x^2)", 0.3) == ffn::math::exp(-(0.3 * 0.3)));
    CHECK(at("x^0.5", 2) == ffn::math::pow(2, 0.5));
    CHECK(at("erf(x) + tanh(x) + log(x) + ln(x) + atan(x)", 0.25) ==
          ffn::math::erf(0.25) + ffn::math::tanh(0.25) + ffn::math::log(0.25) + ffn::math::log(0.25) + ffn::math::atan(0.25));
}

TEST_CASE("a target that is not finite, or not an expression, is a clear error") {
    CHECK_THROWS_WITH_AS(at("log(x)", -1), doctest::Contains("not finite at x = -1"), ffn::Error);
    CHECK_THROWS_WITH_AS(at("sin(1e7 * x)", 1), doctest::Contains("not finite"), ffn::Error);
    CHECK_THROWS_WITH_AS(at("x +* 2", 1), doctest::Contains("cannot read \"x +* 2\""), ffn::Error);
    CHECK_THROWS_WITH_AS(at("cbrt(x)", 1), doctest::Contains("cannot read"), ffn::Error);
}

#include "core/hash.h"
#include "experiments/registry.h"
#include "experiments/width_sweep/width_sweep.h"
#include "runner/config.h"
#include "support.h"

namespace {
ffn::runner::Plan width_plan(const std::vector<std::string>& sets) {
    std::vector<ffn::runner::Override> overrides;
    for (const auto& s : sets) overrides.push_back(ffn::runner::parse_override(s));
    const auto path = ffn::test::source_path("configs/smoke/width_small.json");
    return ffn::runner::make_plan(ffn::runner::load_config(path), path, overrides, ffn::experiments::all_kinds());
}
}  // namespace

TEST_CASE("target \"points\": the config's own points are the data, and at its default the key leaves run ids alone") {
    using ffn::experiments::width_sweep::make_fit_data;
    const auto p = width_plan({"target=points", "points=[[-1,0.5],[0,0],[1,0.5]]", "samples=3", "interval=[-1,1]"});
    const auto d = make_fit_data(p.runs.front());
    CHECK(d.x == std::vector<double>{-1, 0, 1});
    CHECK(d.y == std::vector<double>{0.5, 0, 0.5});
    CHECK(ffn::experiments::width_sweep::target_curve(p.runs.front(), d)(0.5) == 0.25);  // drawn as straight lines
    CHECK(std::isnan(ffn::experiments::width_sweep::target_curve(p.runs.front(), d)(1.5)));
    // Runs that do not use the key keep the ids they had before it was
    // added (the hash of their values without it): their caches and
    // expected tables stay.
    const auto plain = width_plan({});
    for (const auto& r : plain.runs) {
        ffn::runner::Json without = r.values();
        without.erase("points");
        CHECK(r.id == ffn::fnv1a64("width_sweep\n" + without.dump()));
    }
    CHECK(width_plan({"points=[]"}).runs.front().id == plain.runs.front().id);
    CHECK(p.runs.front().id != plain.runs.front().id);
    CHECK_THROWS_WITH(width_plan({"points=[[-1,0.5],[0,0],[1,0.5]]"}),
                      doctest::Contains("key 'points': given with target 'sin(3*x)'; target \"points\" fits them"));
}
