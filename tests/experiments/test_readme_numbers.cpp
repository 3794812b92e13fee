// Numbers a kind's README quotes from its tables are written in backticks
// (`0.05907`), and each must be a value of one of the kind's expected tables
// at the digits it shows: a README cannot drift from the tables it reports.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "report/table.h"
#include "report/table_io.h"
#include "support.h"

namespace {

namespace fs = std::filesystem;

// The backticked spans of `text` that are a number and nothing else.
std::vector<std::string> quoted_numbers(const std::string& text) {
    std::vector<std::string> out;
    for (std::size_t open = text.find('`'); open != std::string::npos;) {
        const std::size_t close = text.find('`', open + 1);
        if (close == std::string::npos) break;
        const std::string span = text.substr(open + 1, close - open - 1);
        std::size_t used = 0;
        try {
            (void)std::stod(span, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (!span.empty() && used == span.size() && span.find_first_not_of("0123456789.e+-") == std::string::npos)
            out.push_back(span);
        open = text.find('`', close + 1);
    }
    return out;
}

// Whether `value` shows as `quoted`: equal for integers, else within half a
// unit of the quoted number's last significant digit.
bool shows_as(double value, const std::string& quoted) {
    const double x = std::stod(quoted);
    if (quoted.find_first_of(".e") == std::string::npos) return value == x;
    const std::string mantissa = quoted.substr(0, quoted.find('e'));
    std::string digits;
    for (char c : mantissa)
        if (std::isdigit(static_cast<unsigned char>(c))) digits += c;
    digits.erase(0, digits.find_first_not_of('0'));
    const int significant = std::max<int>(1, static_cast<int>(digits.size()));
    const double unit = std::pow(10.0, std::floor(std::log10(std::fabs(x))) - significant + 1);
    return std::fabs(value - x) <= 0.5 * unit * (1 + 1e-9);
}

// The README without its key table, whose backticked defaults are config
// values, not results (test_readme_keys.cpp checks that block).
std::string without_key_table(std::string text) {
    const auto from = text.find("<!-- keys:");
    const auto to = text.find("<!-- end of keys -->");
    if (from != std::string::npos && to != std::string::npos && to > from) text.erase(from, to - from);
    return text;
}

}  // namespace

TEST_CASE("every number an experiment README quotes in backticks is in that kind's expected tables") {
    int checked = 0;
    for (const auto& kind : fs::directory_iterator(ffn::test::source_path("experiments"))) {
        const fs::path readme = kind.path() / "README.md", expected = kind.path() / "expected";
        if (!fs::exists(readme) || !fs::is_directory(expected)) continue;
        std::vector<double> values;
        for (const auto& file : fs::directory_iterator(expected))
            for (const auto& table : ffn::report::read_tables(file.path().string()))
                for (const auto& row : table.rows())
                    for (const auto& cell : row)
                        if (const auto v = ffn::report::as_number(cell)) values.push_back(*v);
        std::ifstream in(readme);
        std::stringstream text;
        text << in.rdbuf();
        for (const std::string& quoted : quoted_numbers(without_key_table(text.str()))) {
            CAPTURE(readme.string());
            CAPTURE(quoted);
            bool found = false;
            for (double v : values) found = found || shows_as(v, quoted);
            CHECK(found);
            ++checked;
        }
    }
    CHECK(checked >= 20);  // the convention is in use, not silently unmatched
}
