#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "report/diff.h"

using namespace ffn::report;

namespace {
Table one(double value, double seconds = 1.0) {
    Table t("t");
    t.add_column("k", ColumnType::integer).add_column("v", ColumnType::real).add_column("s", ColumnType::real, 3, true);
    t.add_row({std::int64_t{1}, value, seconds});
    return t;
}
}  // namespace

TEST_CASE("the tolerance rule is allclose's: rtol scales the reference, the second argument") {
    CHECK(within(1.5, 1.0, {.rtol = 0.5, .atol = 0}));
    CHECK_FALSE(within(2.0, 1.0, {.rtol = 0.5, .atol = 0}));  // |2 - 1| > 0.5 * |1|
    CHECK(within(1.0, 2.0, {.rtol = 0.5, .atol = 0}));        // |1 - 2| <= 0.5 * |2|
    CHECK(within(0.0, 1e-13, {.rtol = 0, .atol = 1e-12}));
    CHECK_FALSE(within(std::nan(""), 1.0, {.rtol = 1, .atol = 1}));
    // check and diff: the second table is the reference.
    CHECK_FALSE(cells_agree(2.0, 1.0, {0.5, 0}));
    CHECK(cells_agree(1.0, 2.0, {0.5, 0}));
}

TEST_CASE("numbers agree within atol plus rtol times the reference") {
    CHECK(cells_agree(1.0, 1.0, {}));
    CHECK_FALSE(cells_agree(1.0, 1.0 + 1e-12, {}));
    CHECK(cells_agree(1.0, 1.0 + 1e-12, {1e-11, 0}));
    CHECK(cells_agree(0.0, 1e-13, {0, 1e-12}));
    CHECK_FALSE(cells_agree(0.0, 1e-11, {0, 1e-12}));
    CHECK(cells_agree(std::int64_t{3}, 3.0, {}));  // an integer and a real of equal value
    CHECK_FALSE(cells_agree(Cell{}, 0.0, {1, 1}));   // null equals only null
    CHECK(cells_agree(Cell{}, Cell{}, {}));
    CHECK_FALSE(cells_agree(std::string("a"), std::string("b"), {1, 1}));
}

TEST_CASE("diff reports cells rows columns and tables - volatile columns never count") {
    CHECK(diff_tables({one(1.0, 1.0)}, {one(1.0, 99.0)}, {}).empty());
    const auto d = diff_tables({one(1.0)}, {one(2.0)}, {});
    REQUIRE(d.size() == 1);
    CHECK(describe(d[0]) == "table 't' row 1 column 'v': A=1 B=2");
    CHECK(diff_tables({one(1.0)}, {one(2.0)}, {0.5, 0}).empty());

    Table extra = one(1.0);
    extra.add_row({std::int64_t{2}, 2.0, 0.0});
    CHECK(describe(diff_tables({one(1.0)}, {extra}, {})[0]) == "table 't': 1 rows in A, 2 in B");
    CHECK(describe(diff_tables({one(1.0)}, {}, {})[0]) == "table 't' only in A");
}

namespace {
// Rows keyed by (m, seed), in the order given.
Table keyed(const std::vector<std::pair<std::int64_t, std::int64_t>>& keys, double rmse) {
    Table t("runs");
    t.add_column("m", ColumnType::integer).add_column("seed", ColumnType::integer).add_column("rmse", ColumnType::real);
    t.add_key("m");
    t.add_key("seed");
    for (const auto& [m, seed] : keys) t.add_row({m, seed, rmse + static_cast<double>(seed)});
    return t;
}
}  // namespace

TEST_CASE("diff matches rows by their key columns and names them by the keys") {
    // The same rows in another order: no difference.
    CHECK(diff_tables({keyed({{2, 0}, {2, 1}, {8, 0}}, 0.5)}, {keyed({{8, 0}, {2, 1}, {2, 0}}, 0.5)}, {}).empty());
    const auto d = diff_tables({keyed({{2, 0}, {2, 1}}, 0.5)}, {keyed({{2, 1}, {2, 2}}, 0.25)}, {});
    REQUIRE(d.size() == 3);
    CHECK(d[0].where == "table 'runs' row m=2, seed=0: only in A");
    CHECK(d[1].where == "table 'runs' row m=2, seed=1 column 'rmse'");
    CHECK(d[1].a == "1.5");
    CHECK(d[1].b == "1.25");
    CHECK(d[2].where == "table 'runs' row m=2, seed=2: only in B");
}

TEST_CASE("keys that do not name every row once fall back to positions") {
    const auto d = diff_tables({keyed({{2, 0}, {2, 0}}, 0.5)}, {keyed({{2, 0}, {2, 0}}, 0.25)}, {});
    REQUIRE(d.size() == 3);
    CHECK(d[0].where == "table 'runs' row 1 column 'rmse'");
    CHECK(d[1].where == "table 'runs' row 2 column 'rmse'");
    CHECK(d[2].where.find("rows matched by position") != std::string::npos);
}

TEST_CASE("the diff report: a summary that counts cells, rows and tables, and B - A with its relative change") {
    Table a("t"), b("t");
    for (Table* t : {&a, &b}) {
        t->add_column("k", ColumnType::integer).add_column("v", ColumnType::real).add_column("w", ColumnType::real);
        t->add_key("k");
    }
    a.add_row({std::int64_t{1}, 2.0, 0.0});
    a.add_row({std::int64_t{2}, 4.0, 1.0});
    b.add_row({std::int64_t{1}, 2.5, 1.0});  // two cells of row k=1 differ
    b.add_row({std::int64_t{2}, 4.0, 1.0});
    const auto d = diff_tables({a}, {b}, {});
    CHECK(difference_summary(d, 1) == "2 cells differ in 1 row of 1 table (1 table compared)");
    CHECK(difference_summary({}, 3) == "A and B agree: no cell differs (3 tables compared)");
    const auto tables = difference_tables(d);
    REQUIRE(tables.size() == 1);
    const Table& r = tables.front();
    CHECK(r.at(0, "row") == Cell{std::string("k=1")});
    CHECK(r.at(0, "column") == Cell{std::string("v")});
    CHECK(r.at(0, "b_minus_a") == Cell{0.5});
    CHECK(r.at(0, "relative_change") == Cell{0.25});  // (2.5 - 2) / |2|, exact in binary
    CHECK(r.at(1, "b_minus_a") == Cell{1.0});
    CHECK(is_null(r.at(1, "relative_change")));  // A = 0: no relative change
    // A structural difference is counted apart from the cells.
    Table extra("u");
    extra.add_column("x", ColumnType::integer);
    const auto with_table = diff_tables({a, extra}, {b}, {});
    CHECK(difference_summary(with_table, 2) ==
          "2 cells differ in 1 row of 1 table (2 tables compared); 1 difference of shape (tables, columns or rows in one side only)");
}

TEST_CASE("rows whose keys repeat are matched by position, and the diff says so") {
    Table a("t"), b("t");
    for (Table* t : {&a, &b}) {
        t->add_column("k", ColumnType::integer).add_column("v", ColumnType::real);
        t->add_key("k");
    }
    a.add_row({std::int64_t{1}, 1.0});
    a.add_row({std::int64_t{1}, 2.0});
    b.add_row({std::int64_t{1}, 2.0});  // the same rows, swapped
    b.add_row({std::int64_t{1}, 1.0});
    const auto d = diff_tables({a}, {b}, {});
    REQUIRE(d.size() == 3);
    CHECK(d.back().where == "table 't': rows matched by position (its keys k do not name each row once)");
    CHECK(diff_tables({a}, {a}, {}).empty());  // and no note when nothing differs
}
