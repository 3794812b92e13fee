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
#include "io/process.h"

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
    // The SVG for pages and papers, a PNG beside it for slides; the body
    // drawn once per terminal.
    const std::string svg = folder + "/figure.svg", png = folder + "/figure.png";
    // $TMPDIR is in the folder's name: quoted as gnuplot's single quotes
    // write a quote, so that no path is read as a command.
    const auto quoted = [](const std::string& path) {
        std::string q;
        for (const char c : path) q += c == '\'' ? std::string("''") : std::string(1, c);
        return "'" + q + "'";
    };
    const std::string script = "set terminal svg size 960,600 dynamic background rgb 'white' noenhanced font 'sans,14'\n"
                               "set output " + quoted(svg) + "\n" + body + "unset output\n" +
                               "set terminal pngcairo size 1600,1000 background rgb 'white' noenhanced font 'sans,22'\n"
                               "set output " + quoted(png) + "\n" + body + "unset output\n";  // not replot: it redraws a multiplot's last panel only
    // Through io::Coprocess, with no shell and a time limit: a gnuplot that
    // hangs is stopped, one that is missing was refused before the sweep
    // (require_gnuplot). Its warnings reach the user's terminal: a figure
    // gnuplot warned about is likely wrong, and the tests ask for silence.
    io::Coprocess gnuplot({"gnuplot"});
    gnuplot.write_line(script);
    const int status = gnuplot.finish();
    if (status != 0 || !std::filesystem::exists(svg) || !std::filesystem::exists(png))
        throw Error(fmt::format("--plot: gnuplot failed to draw {} (status {}; apt-get install gnuplot-nox)", output, status));
    io::write_file_atomically(output, io::read_file(svg));
    io::write_file_atomically(std::filesystem::path(output).replace_extension(".png").string(), io::read_file(png));
}

void require_gnuplot() {
    if (!io::program_exists("gnuplot"))
        throw Error("--plot: gnuplot is not on PATH, and it draws the figures (Debian: apt-get install gnuplot-nox)");
}

// A title gnuplot shows as it is: only characters that no gnuplot syntax
// gives a meaning inside a single-quoted string (no backquote, @, $, \ or
// control character), and the quote itself doubled, as such a string
// writes it; any other becomes '?'.
std::string plain_title(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (c == '\'') out += "''";
        else if (std::isalnum(static_cast<unsigned char>(c)) || std::string_view(" +-*/^().,=_<>!|&%:;[]{}~#").find(c) != std::string_view::npos)
            out += c;
        else out += '?';
    }
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
    std::string palette;
    for (std::size_t i = 0; i < std::size(kPalette); ++i) palette += fmt::format("set linetype {} lc rgb '{}' lw 2\n", i + 1, kPalette[i]);
    // Past the palette, its colours come round again.
    palette += fmt::format("set linetype cycle {}\n", std::size(kPalette));
    return palette + "set title '" + plain_title(title) + "'\nset xlabel '" + plain_title(xlabel) + "'\nset ylabel '" +
           plain_title(ylabel) + "'\n" +
           // Above the plot, under the title, in rows: beside it, a legend
           // of long titles took 40% of the figure's width, and below it
           // gnuplot laid the key over the x label. Each swatch before its
           // label, left-aligned.
           "set key above horizontal reverse Left width 1 spacing 1.1\nset grid\n";
}

std::string distinct_colour(std::size_t i, std::size_t count) {
    if (count <= std::size(kPalette)) return kPalette[i % std::size(kPalette)];
    // Hues a golden angle apart never repeat and stay apart, however many.
    const double h = std::fmod(static_cast<double>(i) * 0.6180339887498949, 1.0) * 6.0, s = 0.75, v = 0.8;
    const double c = v * s, x = c * (1 - std::fabs(std::fmod(h, 2.0) - 1)), m = v - c;
    double r = 0, g = 0, b = 0;
    switch (static_cast<int>(h)) {
        case 0: r = c, g = x; break;
        case 1: r = x, g = c; break;
        case 2: g = c, b = x; break;
        case 3: g = x, b = c; break;
        case 4: r = x, b = c; break;
        default: r = c, b = x; break;
    }
    const auto byte = [&](double u) { return static_cast<int>(std::lround((u + m) * 255)); };
    return fmt::format("#{:02X}{:02X}{:02X}", byte(r), byte(g), byte(b));
}

double nice_step(double at_least) {
    if (!(at_least > 0) || !std::isfinite(at_least)) return 1;
    const double power = std::pow(10.0, std::floor(std::log10(at_least)));
    for (const double m : {1.0, 2.0, 5.0, 10.0})
        if (m * power >= at_least) return m * power;
    return 10 * power;
}

std::vector<double> numbers(const report::Table& table, const std::string& column) {
    std::vector<double> out;
    for (std::size_t r = 0; r < table.row_count(); ++r) {
        const auto x = report::as_number(table.at(r, column));
        out.push_back(x ? *x : std::numeric_limits<double>::quiet_NaN());
    }
    return out;
}

std::string point_label(const runner::Plan& plan, const report::Table& table, std::size_t row, bool with_keys) {
    std::string label;
    for (const auto& key : plan.swept_keys)
        if (key != "seed" && table.find_column(key))
            label += (label.empty() ? "" : " ") + (with_keys ? key + "=" : "") + report::format_cell(table.at(row, key), 6);
    return label;
}

const report::Table& find_table(const std::vector<report::Table>& tables, const std::string& name, const std::string& kind) {
    for (const auto& t : tables)
        if (t.name() == name) return t;
    throw Error("--plot: " + kind + " produced no '" + name + "' table");
}

}  // namespace ffn::experiments::plot
