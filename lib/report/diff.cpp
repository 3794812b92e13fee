#include "report/diff.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <set>
#include <unordered_set>

namespace ffn::report {

bool cells_agree(const Cell& a, const Cell& b, Tolerance tol) {
    const auto x = as_number(a), y = as_number(b);
    if (x && y) {
        if (std::isnan(*x) || std::isnan(*y)) return std::isnan(*x) && std::isnan(*y);
        if (*x == *y) return true;  // also equal infinities
        return within(*x, *y, tol);
    }
    return a == b;
}

namespace {

const Table* find_table(const std::vector<Table>& tables, const std::string& name) {
    for (const auto& t : tables)
        if (t.name() == name) return &t;
    return nullptr;
}

// Rows are named by their key columns ("model.width=16, seed=3") when both
// tables' keys name every row once; else by position ("row 3").
struct RowNames {
    std::vector<std::string> a, b;
    bool by_key = false;
};

std::vector<std::string> key_texts(const Table& t, const std::vector<std::string>& keys) {
    std::vector<std::string> out;
    for (std::size_t r = 0; r < t.row_count(); ++r) {
        std::string text;
        for (const auto& k : keys) text += (text.empty() ? "" : ", ") + k + "=" + format_cell(t.at(r, k), 0);
        out.push_back(text);
    }
    return out;
}

bool all_different(std::vector<std::string> names) {
    std::sort(names.begin(), names.end());
    return std::adjacent_find(names.begin(), names.end()) == names.end();
}

RowNames row_names(const Table& a, const Table& b) {
    const std::vector<std::string>& keys = a.keys().empty() ? b.keys() : a.keys();
    const bool usable = !keys.empty() && std::all_of(keys.begin(), keys.end(), [&](const std::string& k) {
        return a.find_column(k) && b.find_column(k);
    });
    RowNames names;
    if (usable) {
        names.a = key_texts(a, keys);
        names.b = key_texts(b, keys);
        names.by_key = all_different(names.a) && all_different(names.b);
    }
    if (!names.by_key) {
        names.a.clear();
        names.b.clear();
        for (std::size_t r = 0; r < a.row_count(); ++r) names.a.push_back(std::to_string(r + 1));
        for (std::size_t r = 0; r < b.row_count(); ++r) names.b.push_back(std::to_string(r + 1));
    }
    return names;
}

void diff_rows(const Table& a, std::size_t ra, const Table& b, std::size_t rb, const std::string& row, Tolerance tol,
               std::vector<Difference>& out) {
    const std::string where = "table '" + a.name() + "' row " + row;
    for (std::size_t ca = 0; ca < a.columns().size(); ++ca) {
        const Column& col = a.columns()[ca];
        const auto cb = b.find_column(col.name);
        if (!cb || col.volatile_ || b.columns()[*cb].volatile_) continue;
        const Cell& x = a.rows()[ra][ca];
        const Cell& y = b.rows()[rb][*cb];
        if (!cells_agree(x, y, tol))
            out.push_back({.where = where + " column '" + col.name + "'",
                           .a = is_null(x) ? "null" : format_cell(x, 0),
                           .b = is_null(y) ? "null" : format_cell(y, 0),
                           .table = a.name(),
                           .row = row,
                           .column = col.name,
                           .x = x,
                           .y = y});
    }
}

void diff_one(const Table& a, const Table& b, Tolerance tol, std::vector<Difference>& out) {
    const std::string here = "table '" + a.name() + "'";
    for (const auto& c : a.columns())
        if (!c.volatile_ && !b.find_column(c.name)) out.push_back({here + ": column '" + c.name + "' only in A", "", ""});
    for (const auto& c : b.columns())
        if (!c.volatile_ && !a.find_column(c.name)) out.push_back({here + ": column '" + c.name + "' only in B", "", ""});
    const RowNames names = row_names(a, b);
    if (!names.by_key) {
        if (a.row_count() != b.row_count())
            out.push_back({here + ": " + std::to_string(a.row_count()) + " rows in A, " + std::to_string(b.row_count()) +
                               " in B",
                           "", ""});
        const std::size_t before = out.size();
        for (std::size_t r = 0; r < std::min(a.row_count(), b.row_count()); ++r)
            diff_rows(a, r, b, r, names.a[r], tol, out);
        // Rows in another order would differ here: say why they are
        // matched by position when the table names keys that repeat.
        const std::vector<std::string>& keys = a.keys().empty() ? b.keys() : a.keys();
        if (out.size() > before && !keys.empty()) {
            std::string listed;
            for (const auto& k : keys) listed += (listed.empty() ? "" : ", ") + k;
            out.push_back({here + ": rows matched by position (its keys " + listed + " do not name each row once)", "", ""});
        }
        return;
    }
    std::unordered_map<std::string, std::size_t> row_of_b;
    for (std::size_t rb = 0; rb < names.b.size(); ++rb) row_of_b.emplace(names.b[rb], rb);
    for (std::size_t ra = 0; ra < a.row_count(); ++ra) {
        const auto it = row_of_b.find(names.a[ra]);
        if (it == row_of_b.end()) out.push_back({here + " row " + names.a[ra] + ": only in A", "", ""});
        else diff_rows(a, ra, b, it->second, names.a[ra], tol, out);
    }
    const std::unordered_set<std::string> in_a(names.a.begin(), names.a.end());
    for (const auto& name : names.b)
        if (!in_a.count(name)) out.push_back({here + " row " + name + ": only in B", "", ""});
}

}  // namespace

std::vector<Difference> diff_tables(const std::vector<Table>& a, const std::vector<Table>& b, Tolerance tol) {
    std::vector<Difference> out;
    for (const auto& t : a) {
        if (const Table* u = find_table(b, t.name())) diff_one(t, *u, tol, out);
        else out.push_back({"table '" + t.name() + "' only in A", "", ""});
    }
    for (const auto& t : b)
        if (!find_table(a, t.name())) out.push_back({"table '" + t.name() + "' only in B", "", ""});
    return out;
}

std::string describe(const Difference& d) {
    if (d.a.empty() && d.b.empty()) return d.where;
    return d.where + ": A=" + d.a + " B=" + d.b;
}

namespace {

std::string counted(std::size_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string difference_summary(const std::vector<Difference>& differences, std::size_t tables_compared) {
    std::size_t cells = 0, notes = 0;
    std::set<std::pair<std::string, std::string>> rows;
    std::set<std::string> tables;
    for (const auto& d : differences) {
        if (!d.is_cell()) {
            ++notes;
            continue;
        }
        ++cells;
        rows.emplace(d.table, d.row);
        tables.insert(d.table);
    }
    const std::string compared = "(" + counted(tables_compared, "table", "tables") + " compared)";
    if (differences.empty()) return "A and B agree: no cell differs " + compared;
    std::string line = cells ? counted(cells, "cell differs", "cells differ") + " in " + counted(rows.size(), "row", "rows") +
                                   " of " + counted(tables.size(), "table", "tables") + " " + compared
                             : "no cell differs " + compared;
    if (notes) line += "; " + counted(notes, "difference", "differences") + " of shape (tables, columns or rows in one side only)";
    return line;
}

std::vector<Table> difference_tables(const std::vector<Difference>& differences) {
    std::vector<Table> out;
    for (const auto& d : differences) {
        if (!d.is_cell()) continue;
        if (out.empty() || out.back().name() != d.table) {
            out.emplace_back(d.table);
            out.back()
                .add_column("row", ColumnType::text)
                .add_column("column", ColumnType::text)
                .add_column("A", ColumnType::text)
                .add_column("B", ColumnType::text)
                .add_column("b_minus_a", ColumnType::real, 0)
                .add_column("relative_change", ColumnType::real, 3);
            // Identifiers for CSV and pandas; the formulas for the eye.
            out.back().set_summary({{"row", ""}, {"column", ""}, {"A", ""}, {"B", ""}, {"b_minus_a", "B - A"}, {"relative_change", "(B - A) / |A|"}});
        }
        const auto x = as_number(d.x), y = as_number(d.y);
        Cell change{}, relative{};
        if (x && y && std::isfinite(*x) && std::isfinite(*y)) {
            change = *y - *x;
            if (*x != 0) relative = (*y - *x) / std::fabs(*x);
        }
        out.back().add_row({d.row, d.column, d.a, d.b, change, relative});
    }
    return out;
}

}  // namespace ffn::report
