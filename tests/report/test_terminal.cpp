// report::to_terminal: what a person reading at a prompt sees.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "report/terminal.h"

using namespace ffn::report;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    return lines;
}

std::size_t longest(const std::string& text) {
    std::size_t n = 0;
    for (const auto& l : lines_of(text)) n = std::max(n, l.size());
    return n;
}

// A width table's shape: a key, a median with its range, a long tail of
// columns, a verdict last.
Table wide_table() {
    Table t("width");
    t.add_column("m", ColumnType::integer)
        .add_column("rmse_median", ColumnType::real, 4)
        .add_column("rmse_min", ColumnType::real, 4)
        .add_column("rmse_max", ColumnType::real, 4);
    for (int i = 0; i < 12; ++i) t.add_column("extra_column_" + std::to_string(i), ColumnType::real, 6);
    t.add_column("verdict", ColumnType::text);
    for (int m : {2, 16}) {
        std::vector<Cell> row{std::int64_t{m}, 0.05907, 0.02119, 0.3041};
        for (int i = 0; i < 12; ++i) row.emplace_back(1234.5678);
        row.emplace_back(std::string(m == 2 ? "pass" : "miss"));
        t.add_row(std::move(row));
    }
    return t;
}

}  // namespace

TEST_CASE("the terminal view fits the width, keeps the verdict, and names what it leaves out") {
    for (std::size_t width : {40, 80, 120}) {
        CAPTURE(width);
        const std::string out = to_terminal(wide_table(), {width, false, {}});
        CHECK(longest(out) <= width);
        const auto lines = lines_of(out);
        CHECK(lines[0].find("verdict") != std::string::npos);  // kept, though columns before it are not
        CHECK(lines[2].ends_with("pass"));
        CHECK(out.find("more: extra_column_") != std::string::npos);
        CHECK(out.find("--wide") != std::string::npos);  // the note says how to see the rest
    }
}

TEST_CASE("a median with its min and max is one column - numbers are right-aligned") {
    const std::string out = to_terminal(wide_table(), {200, false, {}});
    const auto lines = lines_of(out);
    CHECK(lines[0].starts_with(" m  rmse median [min, max]"));
    // Three digits for a spread: the files keep the rest.
    CHECK(lines[2].starts_with(" 2  0.0591 [0.0212, 0.304]"));
    CHECK(lines[3].starts_with("16  0.0591 [0.0212, 0.304]"));
    CHECK(out.find("rmse_min") == std::string::npos);
}

TEST_CASE("a summary picks and orders the default columns with their labels - --wide and --columns override it") {
    Table t = wide_table();
    t.set_summary({{"m", "width"}, {"verdict", ""}, {"rmse_median", "RMSE"}, {"not_here", "skipped"}});
    const auto lines = lines_of(to_terminal(t, {80, false, {}}));
    CHECK(lines[0] == "width  verdict  " + std::string(22 - 4, ' ') + "RMSE");  // over "0.0591 [0.0212, 0.304]"
    CHECK(lines[2] == "    2  pass     0.0591 [0.0212, 0.304]");
    // Header, rule, two rows, then the columns the summary leaves out, by
    // name (rmse_min and rmse_max are in the shown median's range).
    REQUIRE(lines.size() > 4);
    CHECK(lines[4].starts_with("(12 more: extra_column_0, extra_column_1,"));
    CHECK(to_terminal(t, {80, false, {}}).find("rmse_min") == std::string::npos);
    // --wide: every column in the table's order, unfitted.
    const std::string wide = to_terminal(t, {80, true, {}});
    CHECK(longest(wide) > 80);
    CHECK(wide.find("extra_column_11") != std::string::npos);
    // --columns: those, in the table's order; min and max shown apart unless asked for together.
    const auto picked = lines_of(to_terminal(t, {80, false, {"rmse_max", "m"}}));
    CHECK(picked[0] == "width  rmse_max");
    CHECK(picked[2] == "    2    0.3041");
}

TEST_CASE("text cells are left-aligned and measured in characters, not bytes") {
    Table t("t");
    t.add_column("name", ColumnType::text).add_column("n", ColumnType::integer);
    t.add_row({std::string("√2"), std::int64_t{1}});
    t.add_row({std::string("abc"), std::int64_t{10}});
    const auto lines = lines_of(to_terminal(t, {80, false, {}}));
    CHECK(lines[0] == "name   n");
    CHECK(lines[2] == "√2     1");
    CHECK(lines[3] == "abc   10");
}

TEST_CASE("a summary names its columns: one inserted later (an expect block's) moves none of them") {
    Table t = wide_table();
    t.set_summary({{"m", ""}, {"rmse_median", "RMSE"}});
    t.insert_column(1, {.name = "m_doc", .type = ColumnType::integer});
    const auto lines = lines_of(to_terminal(t, {80, false, {}}));
    CHECK(lines[0] == " m                    RMSE  verdict");  // and the verdict, which is shown wherever it came from
}

TEST_CASE("wrapped breaks at spaces within the width, indents the rest, and keeps a long word whole") {
    CHECK(wrapped("  name ", "one two three four", 14, 7) == "  name one two\n       three\n       four\n");
    CHECK(wrapped("", "a-very-long-word b", 5, 0) == "a-very-long-word\nb\n");
    // Words given as a list keep their own spaces.
    CHECK(wrapped("(2 more:", std::vector<std::string>{"PL bound,", "kinks [min, max];"}, 20, 0) ==
          "(2 more: PL bound,\nkinks [min, max];\n");
    CHECK(wrapped("x", "", 10, 0) == "x\n");
}
