#include <doctest/doctest.h>

#include <fstream>

#include "core/error.h"
#include "report/diff.h"
#include "report/table_io.h"
#include "support.h"

using namespace ffn::report;

namespace {
Table sample() {
    Table t("sample");
    t.add_column("name", ColumnType::text)
        .add_column("count", ColumnType::integer)
        .add_column("value", ColumnType::real, 3)
        .add_column("ok", ColumnType::boolean)
        .add_column("seconds", ColumnType::real, 2, /*volatile=*/true);
    t.add_row({std::string("a, \"quoted\""), std::int64_t{3}, 0.1 + 0.2, true, 1.5});
    t.add_row({std::string("b|pipe"), std::int64_t{-7}, Cell{}, false, 2.0});
    return t;
}
}  // namespace

TEST_CASE("markdown shows the configured digits and escapes pipes") {
    const std::string md = to_markdown(sample());
    CHECK(md.find("| name        | count | value | ok    | seconds |\n"
                  "| ----------- | ----: | ----: | ----- | ------: |\n"
                  "| a, \"quoted\" |     3 |   0.3 | true  |     1.5 |\n") == 0);  // padded; 3 significant digits
    CHECK(md.find("b\\|pipe") != std::string::npos);
}

TEST_CASE("JSON keeps full precision and round-trips every cell") {
    const Table t = sample();
    const Json j = to_json(t);
    CHECK(j["rows"][0]["value"].get<double>() == 0.1 + 0.2);  // not 0.3
    CHECK(j["rows"][1]["value"].is_null());
    const Table back = table_from_json(Json::parse(j.dump()), "test");
    CHECK(back.rows() == t.rows());
    CHECK(back.columns()[4].volatile_);
    CHECK(back.columns()[2].precision == 3);
}

TEST_CASE("a table's key columns go through JSON - keys naming no column are refused") {
    Table t = sample();
    t.add_key("name");
    const Json j = to_json(t);
    CHECK(j["keys"] == Json::array({"name"}));
    CHECK(table_from_json(Json::parse(j.dump()), "test").keys() == std::vector<std::string>{"name"});
    CHECK(to_json(sample()).contains("keys") == false);  // no keys, no field: older files read as before
    Json bad = j;
    bad["keys"] = Json::array({"nope"});
    CHECK_THROWS_WITH_AS(table_from_json(bad, "f.json"), doctest::Contains("f.json: table 'sample': 'keys' names \"nope\""),
                         ffn::Error);
    bad["keys"] = Json::array({"name", "name"});
    CHECK_THROWS_WITH_AS(table_from_json(bad, "f.json"), doctest::Contains("twice"), ffn::Error);
    bad["keys"] = "name";
    CHECK_THROWS_WITH_AS(table_from_json(bad, "f.json"), doctest::Contains("a list of column names"), ffn::Error);
}

TEST_CASE("CSV round-trips values quotes and nulls") {
    const Table t = sample();
    const std::string csv = to_csv(t);
    CHECK(csv.rfind("name,count,value,ok,seconds\n", 0) == 0);
    CHECK(csv.find("\"a, \"\"quoted\"\"\"") != std::string::npos);
    const Table back = table_from_csv(csv, "sample", "test.csv");
    CHECK(back.rows() == t.rows());
    CHECK(diff_tables({t}, {back}, {}).empty());
}

TEST_CASE("read_tables names the file on bad input") {
    ffn::test::TempDir dir;
    CHECK_THROWS_WITH(read_tables(dir.file("missing.json")), doctest::Contains("missing.json: cannot open"));
    std::ofstream(dir.file("bad.json")) << "{\"tables\": [";
    CHECK_THROWS_WITH(read_tables(dir.file("bad.json")), doctest::Contains("bad.json:1:13: invalid JSON"));
    std::ofstream(dir.file("other.json")) << "[1, 2]";
    CHECK_THROWS_WITH(read_tables(dir.file("other.json")), doctest::Contains("expected an ffn-lab results document"));
    std::ofstream(dir.file("ragged.csv")) << "a,b\n1,2\n3\n";
    CHECK_THROWS_WITH(read_tables(dir.file("ragged.csv")), doctest::Contains("line 3 has 1 fields"));
}

TEST_CASE("CSV reads only decimal numbers as numbers: hex floats, inf and nan stay text") {
    const Table t = table_from_csv("a,b,c,d,e\n0x1p3,inf,nan,1e-3,-2\n", "t", "t.csv");
    const auto& row = t.rows().front();
    CHECK(row[0] == Cell{std::string("0x1p3")});
    CHECK(row[1] == Cell{std::string("inf")});
    CHECK(row[2] == Cell{std::string("nan")});
    CHECK(row[3] == Cell{1e-3});
    CHECK(row[4] == Cell{std::int64_t{-2}});
}

TEST_CASE("a results document with two tables of one name is refused, not half compared") {
    ffn::test::TempDir dir;
    const std::string one = R"({"name": "t", "columns": ["a"], "types": {"a": "integer"}, "rows": [{"a": 1}]})";
    std::ofstream(dir.file("twice.json")) << R"({"tables": [)" << one << ", " << one << "]}";
    CHECK_THROWS_WITH(read_tables(dir.file("twice.json")), doctest::Contains("twice.json: two tables named 't'"));
}

TEST_CASE("a table read from a file with a column named twice is bad input, not an internal error") {
    CHECK_THROWS_WITH(table_from_csv("a,a,b\n1,2,3\n", "t", "t.csv"), doctest::Contains("t.csv: column 'a' appears twice"));
    ffn::test::TempDir dir;
    std::ofstream(dir.file("twice.json"))
        << R"({"tables": [{"name": "t", "columns": ["a", "a"], "types": {"a": "integer"}, "rows": [{"a": 1}]}]})";
    CHECK_THROWS_WITH(read_tables(dir.file("twice.json")), doctest::Contains("column 'a' appears twice"));
}

TEST_CASE("the streamed writers give the whole-string writers' bytes, in pieces") {
    // Exact bytes for JSON, against the document the DOM dumps: write_outputs
    // streams what `diff`, `check` and readers of results.json read. Tables
    // with no rows, two, many, keys, text that JSON escapes, and nulls.
    // (to_markdown and to_csv gather these writers' pieces; their formats are
    // pinned by the tests above.)
    Table keyed("keyed");
    keyed.add_column("width", ColumnType::integer).add_column("label", ColumnType::text).add_column("x", ColumnType::real, 4);
    keyed.add_key("width");
    for (int i = 0; i < 300; ++i)
        keyed.add_row({std::int64_t{i}, std::string(i % 7 ? "plain" : "line\nbreak \"q\" \t\u00e9"), i % 5 ? Cell{1.0 / (i + 1)} : Cell{}});
    Table empty("empty");
    empty.add_column("a", ColumnType::real);
    for (const Table& t : {sample(), keyed, empty}) {
        std::string md, csv, json;
        int pieces = 0;
        write_markdown(t, [&](std::string_view p) { md += p; ++pieces; });
        write_csv(t, [&](std::string_view p) { csv += p; });
        write_results_document("kind", t, [&](std::string_view p) { json += p; });
        CHECK(json == results_document("kind", {t}, nullptr).dump(2) + "\n");
        if (t.name() == "keyed") {
            CHECK(md.find("| width |") == 0);
            CHECK(csv.find("\n299,plain,") != std::string::npos);  // the last row, whole
        }
        CHECK(pieces == static_cast<int>(t.row_count()) + 1);  // a line a row: never the whole table at once
        CHECK(table_from_json(Json::parse(json)["tables"][0], "test").rows() == t.rows());
    }
}

// A table whose rows are made when read (a sweep's runs table): the
// writers take them one at a time and write what the same rows held give;
// rows() makes them once and the table holds them from then on.
TEST_CASE("a table's row source is written row by row, and made whole once when its rows are read") {
    const Table held = sample();
    Table made("sample");
    for (const auto& c : held.columns()) made.add_column(c);
    std::size_t calls = 0;
    made.set_row_source(held.row_count(), [&](std::size_t i) {
        ++calls;
        return held.rows().at(i);
    });
    CHECK(made.row_count() == 2);
    CHECK(to_csv(made) == to_csv(held));
    CHECK(calls == 2);  // one call a row, nothing kept
    CHECK(to_markdown(made) == to_markdown(held));
    CHECK(calls == 6);  // the widths, then the lines
    std::string json;
    write_results_document("x", made, [&](std::string_view piece) { json += piece; });
    std::string held_json;
    write_results_document("x", held, [&](std::string_view piece) { held_json += piece; });
    CHECK(json == held_json);
    CHECK(calls == 8);
    CHECK(made.rows() == held.rows());
    CHECK(calls == 10);
    CHECK(to_csv(made) == to_csv(held));
    CHECK(calls == 10);  // held now
    // A change makes the rows first: the new row follows the made ones.
    Table grown("sample");
    for (const auto& c : held.columns()) grown.add_column(c);
    grown.set_row_source(2, [&](std::size_t i) { return held.rows().at(i); });
    grown.add_row(held.rows().front());
    CHECK(grown.row_count() == 3);
    CHECK(grown.at(2, "count") == Cell{std::int64_t{3}});
}
