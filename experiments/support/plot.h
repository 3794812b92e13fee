#pragma once
// `sweep --plot DIR`'s figures, drawn by gnuplot as SVG and PNG. What every kind's
// plot needs: a datablock of numbers, a header, and a render that keeps
// anything the user typed from reaching gnuplot as a command.
#include <cstddef>
#include <iterator>
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"

namespace ffn::experiments::plot {

// Runs the gnuplot script `body` (everything after the terminal and output
// lines) and moves the figure to `output` (.svg) whole, with a PNG of it
// beside (the same name, .png, 1600 x 1000 for slides), or throws
// ffn::Error (gnuplot missing or failing, a full disk).
void render(const std::string& body, const std::string& output);
// Refuses (ffn::Error) when gnuplot cannot be run: called before a sweep
// that draws, so that no work is lost to a missing program.
void require_gnuplot();

// Line colours 1..12 that readers with the common colour blindnesses
// tell apart on white: Okabe and Ito's (without their yellow, which
// vanishes on white, and black, kept for targets and the documents'
// values), then Paul Tol's muted indigo, olive, purple, wine, teal and
// brown. header() makes them gnuplot's linetypes, so `lc N` picks the N-th.
inline constexpr const char* kPalette[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9",
                                           "#332288", "#999933", "#AA4499", "#882255", "#44AA99", "#661100"};
inline constexpr std::size_t kPaletteSize = std::size(kPalette);
// What a target or reference curve is drawn in: behind the fits, wide and
// grey, so that a fit on top of it stays visible.
inline constexpr const char* kTargetStyle = "lw 6 lc rgb '#BBBBBB'";

// `text` with every character gnuplot could read as syntax inside a quoted
// string (quote, backquote, @, $, \, control characters) turned into '?'.
std::string plain_title(const std::string& text);

// A gnuplot datablock $name: one row per index, one column per series.
std::string data_block(const std::string& name, const std::vector<std::vector<double>>& columns);

// Title, axis labels, the key outside on the right, a grid.
std::string header(const std::string& title, const std::string& xlabel, const std::string& ylabel);

// The colour of line `i` of `count` ("#RRGGBB"): the palette's while it
// lasts; past it, hues spread so that no two lines share a colour.
std::string distinct_colour(std::size_t i, std::size_t count);

// 1, 2 or 5 times a power of ten, the nearest at or above `at_least`: a
// tick step a reader takes in at a glance.
double nice_step(double at_least);

// The numbers of `column` of `table`, nulls as NaN (gnuplot leaves a gap).
std::vector<double> numbers(const report::Table& table, const std::string& column);

// The point of the grid that row `row` of `table` belongs to, as its swept
// values but the seed ("features=10 target=abs", or "10 abs" without the
// keys, for a tick); "" when only seeds vary.
std::string point_label(const runner::Plan& plan, const report::Table& table, std::size_t row, bool with_keys = true);

// The table named `name` among `tables`; throws naming the kind otherwise.
const report::Table& find_table(const std::vector<report::Table>& tables, const std::string& name, const std::string& kind);

}  // namespace ffn::experiments::plot
