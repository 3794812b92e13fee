#include "results.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <unistd.h>

#include "common.h"
#include "core/error.h"
#include "report/text.h"
#include "report/expect.h"
#include "report/table_io.h"
#include "report/terminal.h"

namespace ffn::app {

namespace {
bool on_terminal(const DisplayOptions& d) { return d.format.empty() && (d.tty || ::isatty(STDOUT_FILENO)); }
}  // namespace

void add_display_options(CLI::App* cmd, DisplayOptions& d, Printed printed, const std::string& columns_example) {
    if (printed == Printed::tables) cmd->add_option("--table", d.tables, "Print only this table (repeatable); files under --out keep all");
    cmd->add_option("-f,--format", d.format, "stdout format (default: aligned columns on a terminal, md elsewhere)")
        ->check(CLI::IsMember({"md", "csv", "json"}));
    cmd->add_option("--columns", d.columns, "Print only these columns: --columns " + columns_example)->delimiter(',');
    cmd->add_flag("--wide", d.wide, "On a terminal: every column, however long the lines");
    cmd->add_flag("--tty", d.tty, "Print as on a terminal (aligned, fitted to $COLUMNS) even into a pipe");
    if (printed == Printed::folders) return;
    cmd->add_flag("--check", d.check, "Exit 1 when any verdict column says miss (n/a, outside the document's protocol, never fails)");
    cmd->add_flag("-q,--quiet", d.quiet, "Nothing on stderr but errors: no progress line, no summary");
}

void print_slowest(std::ostream& out, std::vector<std::pair<double, std::string>> times, std::size_t most) {
    std::stable_sort(times.begin(), times.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    times.resize(std::min(times.size(), most));
    out << "slowest " << times.size() << ":\n";
    for (const auto& [seconds, name] : times) out << fmt::format("  {:>8}  {}\n", report::seconds_text(seconds), name);
}

void check_display(const DisplayOptions& d) {
    const bool terminal = on_terminal(d);
    const std::string format = d.format.empty() ? "md" : d.format;
    if (terminal && !d.columns.empty() && d.wide) throw Error("--columns and --wide: give one (--wide is every column)");
    if (d.tty && !d.format.empty()) throw Error("--tty and --format " + d.format + ": give one (--tty is the terminal view)");
    if (!terminal && d.wide) throw Error("--wide: for the terminal view; --format " + format + " prints every column");
    if (format == "csv" && d.tables.size() > 1) throw Error("--format csv: one table per stream; give one --table (--out writes them all)");
}

void print_tables(const std::vector<report::Table>& tables, const std::string& kind, const runner::Json& manifest,
                  const DisplayOptions& d) {
    const bool terminal = on_terminal(d);
    const std::string format = d.format.empty() ? "md" : d.format;
    // An explicit format asks for every table; the default shows what a
    // terminal shows, in a pipe too.
    const report::Selected shown =
        report::select_tables(tables, {d.tables, d.columns, !d.format.empty()}, kind);
    // CSV is one table per stream for pandas and friends: several tables
    // would need separators no CSV reader knows.
    if (format == "csv" && shown.tables.size() > 1) {
        std::string names;
        for (const auto* t : shown.tables) names += (names.empty() ? "" : ", ") + t->name();
        throw Error(fmt::format("--format csv: experiment '{}' has {} tables ({}); name one with --table (--out writes them all)",
                                kind, shown.tables.size(), names));
    }
    if (format == "json" && !terminal) {
        std::vector<report::Table> picked;
        for (const auto* t : shown.tables) picked.push_back(*t);
        std::cout << report::results_document(kind, picked, manifest).dump(2) << "\n";
    } else {
        const report::TerminalView view{terminal_width(), d.wide, {}};
        for (std::size_t i = 0; i < shown.tables.size(); ++i) {
            const auto& t = *shown.tables[i];
            if (format == "csv") {
                std::cout << to_csv(t);
                continue;
            }
            std::cout << (i ? "\n" : "") << "## " << t.name() << "\n\n";
            if (!shown.instead[i].empty()) std::cout << shown.instead[i] << "\n";
            else std::cout << (terminal ? report::to_terminal(t, view) : to_markdown(t));
        }
    }
    std::cout.flush();
}

int print_results(const runner::Plan& plan, const runner::SweepResult& result, const DisplayOptions& d) {
    print_tables(result.tables, plan.kind->name, result.manifest, d);
    if (d.quiet) return d.check && report::count_verdicts(result.tables).miss > 0 ? 1 : 0;
    const auto& e = result.expect;
    const auto verdicts = report::count_verdicts(result.tables);
    if (verdicts.pass + verdicts.miss + verdicts.not_applicable > 0)
        std::cerr << fmt::format("{}: verdicts {} pass, {} miss, {} n/a\n", plan.source, verdicts.pass, verdicts.miss,
                                 verdicts.not_applicable);
    if (e.passed + e.missed > 0)
        std::cerr << fmt::format("{}: {} of {} document values matched{}\n", plan.source, e.passed, e.passed + e.missed,
                                 e.missed ? fmt::format(", {} missed", e.missed) : "");
    if (!plan.protocol_deviations.empty()) {
        std::string keys;
        for (const auto& k : plan.protocol_deviations) keys += (keys.empty() ? "" : ", ") + k;
        if (verdicts.pass + verdicts.miss > 0)
            std::cerr << fmt::format("{}: rows off the document's protocol ({} differ) are not judged\n", plan.source, keys);
        else
            std::cerr << fmt::format("{}: not the document's protocol ({} differ): no document value is judged\n", plan.source, keys);
    }
    for (const auto& origin : e.unmatched) std::cerr << origin << ": no row to compare (narrowed by --set?)\n";
    // --check judges every verdict column: a miss anywhere fails it, n/a never does.
    return d.check && verdicts.miss > 0 ? 1 : 0;
}

}  // namespace ffn::app
