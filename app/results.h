#pragma once
// Printing a sweep's tables and its verdict lines: what `sweep` and `merge`
// show once the work is done, as on a terminal (aligned, fitted to its
// width) or as markdown, CSV or JSON.
#include <CLI/CLI.hpp>

#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "report/selection.h"
#include "runner/execute.h"

namespace ffn::app {

struct DisplayOptions {
    std::string format;                // md, csv or json; empty: the terminal view on a terminal (or --tty), else md
    std::vector<std::string> tables;   // --table
    std::vector<std::string> columns;  // --columns
    bool wide = false, tty = false, quiet = false, check = false;
};

// What a command prints: a sweep's tables (sweep, merge), which take
// --table, --check and -q too, or a listing of folders (results).
enum class Printed { tables, folders };

// The display options (-f/--format, --columns, --wide, --tty; for tables
// also --table, --check, -q), registered here once for every command that
// prints. `columns_example` ends --columns' help.
void add_display_options(CLI::App* cmd, DisplayOptions& d, Printed printed, const std::string& columns_example);

// --durations N (pytest's habit): the `most` slowest of `times` (seconds,
// name), slowest first, one line each under "slowest N:".
void print_slowest(std::ostream& out, std::vector<std::pair<double, std::string>> times, std::size_t most);

// Refuses contradictory display options before any work.
void check_display(const DisplayOptions& d);

// Prints the tables to stdout as the options ask (`kind` names the
// experiment in messages and in the JSON document; `manifest` may be null).
void print_tables(const std::vector<report::Table>& tables, const std::string& kind, const runner::Json& manifest,
                  const DisplayOptions& d);

// Prints the tables to stdout and the verdict summary to stderr; returns
// the exit code (1 when --check finds a miss).
int print_results(const runner::Plan& plan, const runner::SweepResult& result, const DisplayOptions& d);

}  // namespace ffn::app
