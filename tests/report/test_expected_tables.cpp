#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "core/error.h"
#include "io/atomic_file.h"
#include "report/expected_tables.h"
#include "report/table_io.h"
#include "support.h"

using namespace ffn::report;

namespace {
// Two points of three items each: a real with a null, an integer, a
// boolean, a text and a volatile column.
Table items() {
    Table t("features");
    t.add_column("point", ColumnType::real).add_column("item", ColumnType::integer);
    t.add_column("norm", ColumnType::real, 4)
        .add_column("count", ColumnType::integer)
        .add_column("represented", ColumnType::boolean)
        .add_column("shape", ColumnType::text)
        .add_column("seconds", ColumnType::real, 2, /*volatile=*/true);
    t.add_key("point");
    t.add_key("item");
    t.set_per_item();
    t.add_row({0.5, std::int64_t{0}, 0.25, std::int64_t{3}, true, std::string("pair"), 1.0});
    t.add_row({0.5, std::int64_t{1}, Cell{}, std::int64_t{-1}, false, std::string("pair"), 2.0});
    t.add_row({0.5, std::int64_t{2}, 1.0, std::int64_t{5}, true, std::string("none"), 3.0});
    t.add_row({0.9, std::int64_t{0}, Cell{}, std::int64_t{7}, false, Cell{}, 4.0});
    t.add_row({0.9, std::int64_t{1}, Cell{}, std::int64_t{7}, false, Cell{}, 5.0});
    t.add_row({0.9, std::int64_t{2}, Cell{}, std::int64_t{7}, false, Cell{}, 6.0});
    return t;
}

std::string document_of(const std::vector<Table>& tables, const Json& config) {
    return expected_document("kind", tables, config);
}
}  // namespace

TEST_CASE("a per-item table is kept as its summary per group: min, mean, max, trues, distinct texts") {
    const Table s = per_item_summary(items());
    CHECK(s.name() == "features_summary");
    CHECK(s.keys() == std::vector<std::string>{"point"});
    std::vector<std::string> names;
    for (const auto& c : s.columns()) names.push_back(c.name);
    // The item key and the volatile column are not summed up.
    CHECK(names == std::vector<std::string>{"point", "items", "norm_min", "norm_mean", "norm_max", "count_min", "count_mean",
                                            "count_max", "represented_true", "shape_distinct"});
    CHECK(s.columns()[2].precision == 4);            // norm's own digits
    CHECK(s.columns()[5].type == ColumnType::integer);  // an integer's min stays an integer
    REQUIRE(s.row_count() == 2);
    // Exact: (0.25 + 1) / 2 and (3 - 1 + 5) / 3 are what a double sum in row order gives.
    CHECK(s.rows()[0] == std::vector<Cell>{0.5, std::int64_t{3}, 0.25, 0.625, 1.0, std::int64_t{-1}, 7.0 / 3.0, std::int64_t{5},
                                           std::int64_t{2}, std::int64_t{2}});
    // A group whose column is all null has no min, mean or max.
    CHECK(s.rows()[1] == std::vector<Cell>{0.9, std::int64_t{3}, Cell{}, Cell{}, Cell{}, std::int64_t{7}, 7.0, std::int64_t{7},
                                           std::int64_t{0}, std::int64_t{0}});
}

TEST_CASE("an expected document is compact, one line a row, and reads back as the tables it was made from") {
    Table keyed("keyed");
    keyed.add_column("width", ColumnType::integer).add_column("label", ColumnType::text).add_column("x", ColumnType::real, 4);
    keyed.add_key("width");
    for (int i = 0; i < 50; ++i)
        keyed.add_row({std::int64_t{i}, std::string(i % 7 ? "plain" : "line\nbreak \"rows\": [] \u00e9"), i % 5 ? Cell{1.0 / (i + 1)} : Cell{}});
    Table empty("empty");
    empty.add_column("a", ColumnType::real);
    // A config holding what the splice looks for stays as it is.
    const Json config = {{"rows", Json::array()}, {"lr", 0.001}};
    const std::string text = document_of({keyed, empty, items()}, config);

    const Json doc = Json::parse(text);
    CHECK(doc["manifest"]["config"] == config);
    REQUIRE(doc["tables"].size() == 3);
    CHECK(doc["tables"][2]["name"] == "features_summary");
    CHECK(doc["tables"][0]["rows"][1] == Json::parse(R"([1, "plain", 0.5])"));
    // 50 rows of keyed and 2 of the summary, each on a line of its own.
    std::size_t row_lines = 0;
    for (std::size_t at = 0; (at = text.find("\n        [", at)) != std::string::npos; ++at) ++row_lines;
    CHECK(row_lines == 52);

    ffn::test::TempDir dir;
    ffn::io::write_file_atomically(dir.file("e.json"), text);
    const auto back = read_tables(dir.file("e.json"));
    const auto kept = expected_form({keyed, empty, items()});
    REQUIRE(back.size() == kept.size());
    for (std::size_t i = 0; i < kept.size(); ++i) {
        CAPTURE(kept[i].name());
        CHECK(back[i].columns() == kept[i].columns());
        CHECK(back[i].rows() == kept[i].rows());
        CHECK(back[i].keys() == kept[i].keys());
    }
}

TEST_CASE("an array row of the wrong length is bad input naming the row") {
    const Json t = Json::parse(R"({"name": "t", "columns": ["a", "b"], "types": {"a": "integer", "b": "real"}, "rows": [[1, 2.5], [3]]})");
    CHECK_THROWS_WITH(table_from_json(t, "e.json"), doctest::Contains("e.json: table 't': row 1 has 1 cells, the table 2 columns"));
    const Json wrong = Json::parse(R"({"name": "t", "columns": ["a"], "types": {"a": "integer"}, "rows": [["x"]]})");
    CHECK_THROWS_WITH(table_from_json(wrong, "e.json"), doctest::Contains("row 0 column 'a'"));
    const Json scalar = Json::parse(R"({"name": "t", "columns": ["a"], "rows": [3]})");
    CHECK_THROWS_WITH(table_from_json(scalar, "e.json"), doctest::Contains("row 0 is not an object or an array"));
}

TEST_CASE("a summary counts NaN and infinities as missing, as a file holds them (null), whatever their row") {
    Table t("features");
    t.add_column("point", ColumnType::integer).add_column("item", ColumnType::integer).add_column("x", ColumnType::real);
    t.add_key("point");
    t.add_key("item");
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    t.add_row({std::int64_t{0}, std::int64_t{0}, nan});
    t.add_row({std::int64_t{0}, std::int64_t{1}, 1.0});
    t.add_row({std::int64_t{0}, std::int64_t{2}, -inf});
    t.add_row({std::int64_t{0}, std::int64_t{3}, 3.0});
    const Table s = per_item_summary(t);
    REQUIRE(s.row_count() == 1);
    CHECK(s.rows()[0] == std::vector<Cell>{std::int64_t{0}, std::int64_t{4}, 1.0, 2.0, 3.0});
}

TEST_CASE("array rows without a types block get each column's type from its cells") {
    const Json j = Json::parse(R"({"name": "t", "columns": ["label", "n", "x"], "rows": [[null, 2, 0.5], ["a", 3, 1.5]]})");
    const Table t = table_from_json(j, "e.json");
    CHECK(t.columns()[0].type == ColumnType::text);
    CHECK(t.columns()[1].type == ColumnType::integer);
    CHECK(t.columns()[2].type == ColumnType::real);
    CHECK(t.rows()[1] == std::vector<Cell>{std::string("a"), std::int64_t{3}, 1.5});
}
