#include "report/expected_tables.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

namespace ffn::report {

namespace {
// What a summary keeps of one column, and how it reads the group's cells.
struct Summed {
    std::size_t column;
    ColumnType type;
};
}  // namespace

Table per_item_summary(const Table& t) {
    if (t.keys().empty()) throw std::logic_error("table '" + t.name() + "': a per-item table needs its item as its last key");
    const std::vector<std::string> group(t.keys().begin(), t.keys().end() - 1);
    Table out(t.name() + "_summary");
    std::vector<std::size_t> group_columns;
    for (const auto& k : group) {
        group_columns.push_back(*t.find_column(k));
        out.add_column(t.columns()[group_columns.back()]);
        out.add_key(k);
    }
    out.add_column("items", ColumnType::integer);
    std::vector<Summed> summed;
    for (std::size_t c = 0; c < t.columns().size(); ++c) {
        const Column& col = t.columns()[c];
        if (col.volatile_ || std::find(t.keys().begin(), t.keys().end(), col.name) != t.keys().end()) continue;
        summed.push_back({c, col.type});
        switch (col.type) {
            case ColumnType::integer:
            case ColumnType::real:
                for (const char* stat : {"_min", "_mean", "_max"})
                    out.add_column(col.name + stat, std::string(stat) == "_mean" ? ColumnType::real : col.type, col.precision);
                break;
            case ColumnType::boolean: out.add_column(col.name + "_true", ColumnType::integer); break;
            case ColumnType::text: out.add_column(col.name + "_distinct", ColumnType::integer); break;
        }
    }

    // The rows of each group, in order of the group's first row.
    std::map<std::vector<Cell>, std::size_t> index;
    std::vector<std::vector<std::size_t>> members;
    for (std::size_t r = 0; r < t.row_count(); ++r) {
        std::vector<Cell> key;
        for (const std::size_t c : group_columns) key.push_back(t.rows()[r][c]);
        const auto [it, added] = index.try_emplace(std::move(key), members.size());
        if (added) members.emplace_back();
        members[it->second].push_back(r);
    }

    for (const auto& rows : members) {
        std::vector<Cell> cells;
        for (const std::size_t c : group_columns) cells.push_back(t.rows()[rows.front()][c]);
        cells.emplace_back(static_cast<std::int64_t>(rows.size()));
        for (const Summed& s : summed) {
            if (s.type == ColumnType::boolean) {
                std::int64_t n = 0;
                for (const std::size_t r : rows) n += t.rows()[r][s.column] == Cell{true};
                cells.emplace_back(n);
            } else if (s.type == ColumnType::text) {
                std::set<std::string> seen;
                for (const std::size_t r : rows)
                    if (const auto* text = std::get_if<std::string>(&t.rows()[r][s.column])) seen.insert(*text);
                cells.emplace_back(static_cast<std::int64_t>(seen.size()));
            } else {
                // In row order, so that the mean's bits are the same every time.
                const Cell* low = nullptr;
                const Cell* high = nullptr;
                double sum = 0;
                std::size_t n = 0;
                for (const std::size_t r : rows) {
                    const Cell& c = t.rows()[r][s.column];
                    const auto x = as_number(c);
                    if (!x || !std::isfinite(*x)) continue;  // as null: a file holds NaN and inf as null
                    if (!low || *x < *as_number(*low)) low = &c;
                    if (!high || *x > *as_number(*high)) high = &c;
                    sum += *x;
                    ++n;
                }
                cells.push_back(low ? *low : Cell{});
                cells.push_back(n ? Cell{sum / static_cast<double>(n)} : Cell{});
                cells.push_back(high ? *high : Cell{});
            }
        }
        out.add_row(std::move(cells));
    }
    return out;
}

std::vector<Table> expected_form(const std::vector<Table>& tables) {
    std::vector<Table> out;
    for (const auto& t : tables) out.push_back(t.per_item() ? per_item_summary(t) : t);
    return out;
}

std::vector<Table> expected_form_of_file(const std::vector<Table>& from_file, const std::vector<Table>& fresh) {
    std::vector<Table> out;
    for (const auto& t : from_file) {
        const bool per_item = std::any_of(fresh.begin(), fresh.end(), [&](const Table& f) { return f.per_item() && f.name() == t.name(); });
        out.push_back(per_item && !t.keys().empty() ? per_item_summary(t) : t);
    }
    return out;
}

std::string expected_document(const std::string& experiment, const std::vector<Table>& tables, const Json& config) {
    return compact_results_document(experiment, expected_form(tables), Json{{"config", config}});
}

}  // namespace ffn::report
