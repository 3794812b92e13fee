#pragma once
// `sweep --plot DIR`'s figures, drawn by gnuplot as SVG. What every kind's
// plot needs: a datablock of numbers, a header, and a render that keeps
// anything the user typed from reaching gnuplot as a command.
#include <string>
#include <vector>

#include "report/table.h"

namespace ffn::experiments::plot {

// Runs the gnuplot script `body` (everything after the terminal and output
// lines) and moves the figure to `output` whole, or throws ffn::Error
// (gnuplot missing or failing, a full disk).
void render(const std::string& body, const std::string& output);

// `text` with every character gnuplot could read as syntax inside a quoted
// string (quote, backquote, @, $, \, control characters) turned into '?'.
std::string plain_title(const std::string& text);

// A gnuplot datablock $name: one row per index, one column per series.
std::string data_block(const std::string& name, const std::vector<std::vector<double>>& columns);

// Title, axis labels, the key outside on the right, a grid.
std::string header(const std::string& title, const std::string& xlabel, const std::string& ylabel);

// The numbers of `column` of `table`, nulls as NaN (gnuplot leaves a gap).
std::vector<double> numbers(const report::Table& table, const std::string& column);

// The table named `name` among `tables`; throws naming the kind otherwise.
const report::Table& find_table(const std::vector<report::Table>& tables, const std::string& name, const std::string& kind);

}  // namespace ffn::experiments::plot
