#include "report/diff.h"

#include <algorithm>
#include <cmath>

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

void diff_one(const Table& a, const Table& b, Tolerance tol, std::vector<Difference>& out) {
    const std::string here = "table '" + a.name() + "'";
    for (const auto& c : a.columns())
        if (!c.volatile_ && !b.find_column(c.name)) out.push_back({here + ": column '" + c.name + "' only in A", "", ""});
    for (const auto& c : b.columns())
        if (!c.volatile_ && !a.find_column(c.name)) out.push_back({here + ": column '" + c.name + "' only in B", "", ""});
    if (a.row_count() != b.row_count())
        out.push_back({here + ": " + std::to_string(a.row_count()) + " rows in A, " +
                           std::to_string(b.row_count()) + " in B",
                       "", ""});
    const std::size_t rows = std::min(a.row_count(), b.row_count());
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t ca = 0; ca < a.columns().size(); ++ca) {
            const Column& col = a.columns()[ca];
            const auto cb = b.find_column(col.name);
            if (!cb || col.volatile_ || b.columns()[*cb].volatile_) continue;
            const Cell& x = a.rows()[r][ca];
            const Cell& y = b.rows()[r][*cb];
            if (!cells_agree(x, y, tol))
                out.push_back({here + " row " + std::to_string(r + 1) + " column '" + col.name + "'",
                               is_null(x) ? "null" : format_cell(x, 0), is_null(y) ? "null" : format_cell(y, 0)});
        }
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

}  // namespace ffn::report
