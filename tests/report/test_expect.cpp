#include <doctest/doctest.h>

#include "core/error.h"
#include "report/expect.h"

using namespace ffn::report;

namespace {
std::vector<Table> tables() {
    Table t("counts");
    t.add_column("d", ColumnType::integer).add_column("params", ColumnType::integer).add_column("share", ColumnType::real);
    t.add_row({std::int64_t{512}, std::int64_t{2099712}, 2.0 / 3.0});
    t.add_row({std::int64_t{768}, std::int64_t{4722432}, 2.0 / 3.0});
    return {t};
}
Expectation on_512(const std::string& column, Cell value, double atol = 0) {
    return {"counts", {{"d", std::int64_t{512}}}, {{column, value}}, atol, 0, "001", "cfg: expect[0]"};
}
}  // namespace

TEST_CASE("a matching value passes and is shown beside ours") {
    auto t = tables();
    const auto s = apply_expectations(t, {on_512("params", std::int64_t{2099712})});
    CHECK(s.passed == 1);
    CHECK(s.missed == 0);
    CHECK(t[0].columns()[2].name == "params_doc");
    CHECK(t[0].at(0, "verdict") == Cell{std::string("pass")});
    CHECK(t[0].at(1, "verdict") == Cell{});  // rows without an expectation stay empty
}

TEST_CASE("a value outside its tolerance is a miss") {
    auto t = tables();
    CHECK(apply_expectations(t, {on_512("share", 0.6667, 1e-4)}).passed == 1);
    auto u = tables();
    const auto s = apply_expectations(u, {on_512("share", 0.6667, 1e-5)});  // off by 3.3e-5
    CHECK(s.missed == 1);
    CHECK(u[0].at(0, "verdict") == Cell{std::string("miss")});
}

TEST_CASE("an expectation naming a missing table or column is an error naming it and a missing row is listed") {
    auto t = tables();
    Expectation e = on_512("params", std::int64_t{1});
    e.table = "nope";
    CHECK_THROWS_WITH(apply_expectations(t, {e}), "cfg: expect[0]: no table named 'nope'");
    CHECK_THROWS_WITH(apply_expectations(t, {on_512("nope", 1.0)}), "cfg: expect[0]: table 'counts' has no column 'nope'");
    Expectation f = on_512("params", std::int64_t{1});
    f.where = {{"d", std::int64_t{1}}};
    const auto s = apply_expectations(t, {f});
    CHECK(s.unmatched == std::vector<std::string>{"cfg: expect[0]"});
    CHECK(s.passed + s.missed == 0);
}
