#include "runner/aggregation.h"

#include "core/error.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#include "core/stats.h"
#include "report/table_io.h"
#include "runner/experiment.h"
#include "runner/run_rows.h"

namespace ffn::runner {

namespace {

// A swept key's column: real when any run's value is, so that a sweep
// written [0, 0.7] is one real column rather than an integer one that
// cannot take 0.7.
report::Column column_for(const Plan& plan, const std::string& key, const Json& value) {
    return {.name = key, .type = plan.swept_real(key) ? report::ColumnType::real : report::column_type_of(value), .precision = 6};
}

}  // namespace

report::Cell swept_cell(const Plan& plan, const std::string& key, const Json& value) {
    if (value.is_number_integer() && plan.swept_real(key)) return value.get<double>();
    return report::cell_of(value);
}

std::vector<std::vector<std::size_t>> Aggregation::seed_groups() const { return runner::seed_groups(plan); }

report::Table Aggregation::concatenated(const std::string& name) {
    for (auto& t : concatenate_runs())
        if (t.name() == name) {
            t.set_long_form();
            return std::move(t);
        }
    throw Error("no run returned a table named '" + name + "'");
}

report::Cell Aggregation::run_cell(std::size_t run, const std::string& column) const {
    if (run_rows) {
        const auto c = run_rows->header().find_column(column);
        if (!c) throw std::logic_error("table '" + run_rows->header().name() + "': no column '" + column + "'");
        return run_rows->cell(run, *c);
    }
    if (per_run.at(run).empty() || per_run[run].front().row_count() == 0) return {};
    return per_run[run].front().at(0, column);
}

const report::Table* Aggregation::run_table(std::size_t run, const std::string& name) const {
    for (const report::Table& t : per_run.at(run))
        if (t.name() == name) return &t;
    return nullptr;
}

std::vector<report::Table> Aggregation::concatenate_runs() {
    if (run_rows) throw std::logic_error("kind '" + plan.kind->name + "': one_row_runs needs an aggregate of its own");
    std::vector<report::Table> out;
    for (std::size_t r = 0; r < per_run.size(); ++r) {
        const auto swept = plan.runs[r].swept();
        for (auto& t : per_run[r]) {
            report::Table* joined = nullptr;
            for (auto& candidate : out)
                if (candidate.name() == t.name()) joined = &candidate;
            if (!joined) {
                out.emplace_back(t.name());
                joined = &out.back();
                // Swept values lead, unless the run's table already shows them.
                for (const auto& [key, value] : swept)
                    if (!t.find_column(key)) joined->add_column(column_for(plan, key, value));
                for (const auto& c : t.columns()) joined->add_column(c);
                // A row per run is named by the run's swept values (report::diff
                // falls back to positions where they repeat).
                for (const auto& [key, value] : swept)
                    if (joined->find_column(key)) joined->add_key(key);
                // ...and, within a run, by the keys its own table names
                // (a quantity, a point, a feature).
                for (const auto& key : t.keys())
                    if (std::find(joined->keys().begin(), joined->keys().end(), key) == joined->keys().end()) joined->add_key(key);
            }
            for (const auto& row : t.rows()) {
                std::vector<report::Cell> cells;
                for (const auto& [key, value] : swept)
                    if (!t.find_column(key)) cells.push_back(swept_cell(plan, key, value));
                cells.insert(cells.end(), row.begin(), row.end());
                joined->add_row(std::move(cells));
            }
        }
    }
    return out;
}

void Aggregation::add_swept_columns(report::Table& table) const {
    if (plan.runs.empty()) return;
    for (const auto& [key, value] : plan.runs.front().point->swept) {
        table.add_column(column_for(plan, key, value));
        table.add_key(key);
    }
}

std::vector<report::Cell> Aggregation::swept_cells(std::size_t run) const {
    std::vector<report::Cell> cells;
    for (const auto& [key, value] : plan.runs.at(run).point->swept) cells.push_back(swept_cell(plan, key, value));
    return cells;
}

std::string Aggregation::settings_key(std::size_t run, const std::vector<std::string>& without, bool resolved) const {
    const Run& r = plan.runs.at(run);
    const auto left_out = [&](const std::string& key) {
        return key == "seed" || std::find(without.begin(), without.end(), key) != without.end();
    };
    std::string key;
    if (resolved) {
        for (const auto& item : r.point->values.items())
            if (!left_out(item.key()) && !plan.kind->schema.left_out_of_ids(item.key(), item.value()))
                key += item.key() + "=" + item.value().dump() + "\n";
    } else {
        for (const auto& [name, value] : r.point->swept)
            if (!left_out(name)) key += name + "=" + value.dump() + "\n";
    }
    return key;
}

void Aggregation::set_summary_after_swept(report::Table& table,
                                          const std::vector<std::pair<std::string, std::string>>& rest) const {
    std::vector<std::pair<std::string, std::string>> columns;
    if (!plan.runs.empty())
        for (const auto& [key, value] : plan.runs.front().point->swept) columns.emplace_back(key, "");
    columns.insert(columns.end(), rest.begin(), rest.end());
    table.set_summary(columns);
}

namespace {

std::string statistic_name(Statistic s) {
    switch (s) {
        case Statistic::mean: return "mean";
        case Statistic::sd: return "sd";
        case Statistic::median: return "median";
        case Statistic::min: return "min";
        case Statistic::max: return "max";
    }
    return "?";
}

report::Cell statistic(Statistic s, const std::vector<double>& v) {
    if (v.empty()) return {};
    switch (s) {
        case Statistic::mean: return mean(v);
        case Statistic::sd: return sample_sd(v);
        case Statistic::median: return median(v);
        case Statistic::min: return *std::min_element(v.begin(), v.end());
        case Statistic::max: return *std::max_element(v.begin(), v.end());
    }
    return {};
}

}  // namespace

void Aggregation::set_headline_summary(report::Table& table) const {
    const auto headline = plan.kind->headlines.find(table.name());
    if (!table.summary().empty() || headline == plan.kind->headlines.end()) return;
    std::vector<std::pair<std::string, std::string>> rest;
    for (const std::string& column : headline->second) rest.emplace_back(column, "");
    set_summary_after_swept(table, rest);
}

report::Table Aggregation::summarize_seeds(const SeedStatistics& spec) const {
    report::Table t(spec.table);
    add_swept_columns(t);
    std::vector<std::string> shown;
    for (const auto& k : spec.keys)
        if (!t.find_column(k)) {
            t.add_column(column_for(plan, k, plan.runs.front().raw(k)));
            shown.push_back(k);
        }
    t.add_column("seeds", report::ColumnType::integer);
    for (const auto& c : spec.columns)
        for (const Statistic s : c.statistics)
            t.add_column(c.as + "_" + statistic_name(s), report::ColumnType::real, spec.precision);
    for (const auto& group : seed_groups()) {
        auto cells = swept_cells(group.front());
        for (const auto& k : shown) cells.push_back(report::cell_of(plan.runs[group.front()].raw(k)));
        cells.push_back(static_cast<std::int64_t>(group.size()));
        for (const auto& c : spec.columns) {
            std::vector<double> values;
            for (const std::size_t i : group)
                if (const auto x = report::as_number(run_cell(i, c.column))) values.push_back(*x);
            for (const Statistic s : c.statistics) cells.push_back(statistic(s, values));
        }
        t.add_row(std::move(cells));
    }
    return t;
}

namespace {
// The runs table's columns: the swept values, the seed, the run id, then
// the columns of the runs' first table.
report::Table empty_runs_table(const Aggregation& a) {
    report::Table runs("runs");
    runs.set_long_form();
    a.add_swept_columns(runs);
    runs.add_column("seed", report::ColumnType::integer);
    runs.add_key("seed");
    runs.add_column("run_id", report::ColumnType::text);
    for (auto c : a.run_rows ? a.run_rows->header().columns() : a.per_run.front().front().columns()) {
        // A run's own column named like a swept key (a kind's "steps" when
        // steps are swept) keeps both: the run's gets a suffix.
        if (runs.find_column(c.name)) c.name += "_run";
        runs.add_column(c);
    }
    return runs;
}
}  // namespace

report::Table Aggregation::per_run_rows() const {
    report::Table runs = empty_runs_table(*this);
    if (run_rows) {
        RunRows::fill_runs_table(runs, run_rows);
        return runs;
    }
    for (std::size_t i = 0; i < per_run.size(); ++i) {
        auto cells = swept_cells(i);
        cells.push_back(static_cast<std::int64_t>(plan.runs[i].seed));
        cells.push_back(plan.runs[i].id_hex());
        const auto& row = per_run[i].front().rows().front();
        cells.insert(cells.end(), row.begin(), row.end());
        runs.add_row(std::move(cells));
    }
    return runs;
}

report::Table Aggregation::take_per_run_rows() {
    if (run_rows) return per_run_rows();
    report::Table runs = empty_runs_table(*this);
    for (std::size_t i = 0; i < per_run.size(); ++i) {
        auto cells = swept_cells(i);
        cells.push_back(static_cast<std::int64_t>(plan.runs[i].seed));
        cells.push_back(plan.runs[i].id_hex());
        std::vector<report::Cell> row = per_run[i].front().take_rows().front();
        std::move(row.begin(), row.end(), std::back_inserter(cells));
        runs.add_row(std::move(cells));
    }
    return runs;
}

}  // namespace ffn::runner
