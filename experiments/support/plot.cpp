#include "experiments/support/plot.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <string_view>

#include "core/error.h"
#include "io/atomic_file.h"

namespace ffn::experiments::plot {

// gnuplot writes into a private folder whose name we made; the figure then
// moves to `output` as every ffn-lab file does.
void render(const std::string& body, const std::string& output) {
    std::string folder = (std::filesystem::temp_directory_path() / "ffnlab-plot-XXXXXX").string();
    if (!::mkdtemp(folder.data())) throw Error("--plot: cannot make a temporary folder for gnuplot");
    struct Cleanup {
        std::string path;
        ~Cleanup() {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
    } cleanup{folder};
    const std::string figure = folder + "/figure.svg";
    const std::string script = "set terminal svg size 960,600 dynamic background rgb 'white' noenhanced\nset output '" +
                               figure + "'\n" + body + "unset output\n";
    FILE* pipe = ::popen("gnuplot", "w");
    if (!pipe) throw Error("--plot: cannot start gnuplot (apt-get install gnuplot-nox)");
    std::fwrite(script.data(), 1, script.size(), pipe);
    const int status = ::pclose(pipe);
    if (status != 0 || !std::filesystem::exists(figure))
        throw Error(fmt::format("--plot: gnuplot failed to draw {} (status {}; apt-get install gnuplot-nox)", output, status));
    io::write_file_atomically(output, io::read_file(figure));
}

// A title gnuplot shows as it is: only characters that no gnuplot syntax
// gives a meaning inside a quoted string (no quote, backquote, @, $, \ or
// control character); any other becomes '?'.
std::string plain_title(const std::string& text) {
    std::string out;
    for (const char c : text)
        out += std::isalnum(static_cast<unsigned char>(c)) || std::string_view(" +-*/^().,=_<>!|&%:;[]{}~#").find(c) != std::string_view::npos
                   ? c
                   : '?';
    return out;
}

// A gnuplot datablock: one row per x, one column per series.
std::string data_block(const std::string& name, const std::vector<std::vector<double>>& columns) {
    std::string out = "$" + name + " << EOD\n";
    for (std::size_t r = 0; r < columns.front().size(); ++r) {
        for (std::size_t c = 0; c < columns.size(); ++c) out += fmt::format("{}{:.9g}", c ? " " : "", columns[c][r]);
        out += "\n";
    }
    return out + "EOD\n";
}

std::string header(const std::string& title, const std::string& xlabel, const std::string& ylabel) {
    return "set title '" + plain_title(title) + "'\nset xlabel '" + plain_title(xlabel) + "'\nset ylabel '" +
           plain_title(ylabel) + "'\nset key outside right\nset grid\n";
}

std::vector<double> numbers(const report::Table& table, const std::string& column) {
    std::vector<double> out;
    for (std::size_t r = 0; r < table.row_count(); ++r) {
        const auto x = report::as_number(table.at(r, column));
        out.push_back(x ? *x : std::numeric_limits<double>::quiet_NaN());
    }
    return out;
}

const report::Table& find_table(const std::vector<report::Table>& tables, const std::string& name, const std::string& kind) {
    for (const auto& t : tables)
        if (t.name() == name) return t;
    throw Error("--plot: " + kind + " produced no '" + name + "' table");
}

}  // namespace ffn::experiments::plot
