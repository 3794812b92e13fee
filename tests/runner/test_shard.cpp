// runner::shard_runs: N parts of a plan are disjoint, cover it, depend on
// the plan alone, balance the kind's costs, and keep a batching kind's
// batches whole. parse_shard takes I/N and refuses the rest.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <set>

#include "core/error.h"
#include "runner/shard.h"
#include "toy_kind.h"

using namespace ffn::runner;

namespace {

// The plan points at its kind: the kinds must outlive it.
Plan plan_of(const std::vector<ExperimentKind>& kinds, const char* json) {
    return make_plan(Json::parse(json), "cfg.json", {}, kinds);
}

constexpr const char* kGrid = R"({"experiment": "toy", "lr": 1, "seeds": {"range": [0, 10]}, "sweep": {"model.width": [1, 2, 4, 8, 16]}})";

}  // namespace

TEST_CASE("parse_shard: I/N with 1 <= I <= N, nothing else") {
    CHECK(parse_shard("2/8").index == 2);
    CHECK(parse_shard("2/8").count == 8);
    CHECK(parse_shard("1/1").count == 1);
    for (const char* bad : {"0/3", "4/3", "3", "/3", "1/", "a/3", "1/3x", "-1/3", "1/0", " 1/3", "1/200000"})
        CHECK_THROWS_AS(parse_shard(bad), ffn::Error);
}

TEST_CASE("shard_runs: disjoint parts that cover the plan, balanced by cost") {
    ExperimentKind kind = ffn::test::toy_kind();
    kind.cost = [](const Run& r) { return static_cast<double>(r.integer("model.width")); };
    const std::vector<ExperimentKind> kinds = {kind};
    const Plan plan = plan_of(kinds, kGrid);
    REQUIRE(plan.runs.size() == 50);
    for (const std::size_t n : {1u, 3u, 7u, 50u, 64u}) {
        CAPTURE(n);
        std::vector<int> seen(plan.runs.size(), 0);
        std::vector<double> load;
        for (std::size_t i = 1; i <= n; ++i) {
            const auto part = shard_runs(plan, {i, n});
            CHECK(std::is_sorted(part.begin(), part.end()));
            CHECK(part == shard_runs(plan, {i, n}));  // the plan alone decides
            double l = 0;
            for (const std::size_t r : part) {
                ++seen[r];
                l += static_cast<double>(plan.runs[r].integer("model.width"));
            }
            load.push_back(l);
        }
        CHECK(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
        // Greedy largest-first: no part exceeds another by more than the
        // largest run's cost (16 here).
        CHECK(*std::max_element(load.begin(), load.end()) - *std::min_element(load.begin(), load.end()) <= 16);
    }
    // By count the 3 parts would hold 17, 17 and 16 runs whatever their
    // widths; by cost (310 in all) each holds 100 to 112.
    double total = 0;
    for (const auto& r : plan.runs) total += static_cast<double>(r.integer("model.width"));
    CHECK(total == 310);
}

TEST_CASE("shard_runs: balance is by cost, not by count") {
    ExperimentKind kind = ffn::test::toy_kind();
    // One run costs as much as all the others together.
    kind.cost = [](const Run& r) { return r.integer("model.width") == 16 && r.seed == 0 ? 1000.0 : 1.0; };
    const std::vector<ExperimentKind> kinds = {kind};
    const Plan plan = plan_of(kinds, kGrid);
    std::vector<std::size_t> sizes;
    for (std::size_t i = 1; i <= 3; ++i) sizes.push_back(shard_runs(plan, {i, 3}).size());
    std::sort(sizes.begin(), sizes.end());
    CHECK(sizes == std::vector<std::size_t>{1, 24, 25});  // the heavy run alone; the 49 others split
}

TEST_CASE("shard_runs: a kind that trains seeds together is cut between its batches") {
    ExperimentKind kind = ffn::test::toy_kind();
    kind.run_batch = [](std::span<const Run>) { return std::vector<std::vector<ffn::report::Table>>{}; };
    kind.batch_runs = 4;  // seeds 0-3, 4-7 and 8-9 of each width train together
    const std::vector<ExperimentKind> kinds = {kind};
    const Plan plan = plan_of(kinds, kGrid);
    for (std::size_t i = 1; i <= 4; ++i) {
        const auto part = shard_runs(plan, {i, 4});
        const std::set<std::size_t> mine(part.begin(), part.end());
        for (const auto& group : seed_groups(plan))
            for (std::size_t k = 0; k < group.size(); k += 4) {
                const auto in = std::count_if(group.begin() + static_cast<std::ptrdiff_t>(k),
                                              group.begin() + static_cast<std::ptrdiff_t>(std::min(group.size(), k + 4)),
                                              [&](std::size_t r) { return mine.count(r) > 0; });
                CHECK((in == 0 || static_cast<std::size_t>(in) == std::min<std::size_t>(4, group.size() - k)));
            }
    }
}
