#include "report/expect.h"

#include <cmath>

#include "core/error.h"
#include "report/diff.h"

namespace ffn::report {

namespace {

bool row_matches(const Table& t, std::size_t r, const Expectation& e) {
    for (const auto& [column, value] : e.where)
        if (!cells_agree(t.at(r, column), value, {})) return false;
    return true;
}

bool value_passes(const Cell& ours, const Cell& doc, const Expectation& e) {
    const auto x = as_number(ours), y = as_number(doc);
    if (x && y) return within(*x, *y, {.rtol = e.rtol, .atol = e.atol});
    return ours == doc;
}

}  // namespace

ExpectSummary apply_expectations(std::vector<Table>& tables, const std::vector<Expectation>& expectations,
                                 const RowApplies& applies) {
    ExpectSummary summary;
    for (const auto& e : expectations) {
        Table* t = nullptr;
        for (auto& candidate : tables)
            if (candidate.name() == e.table) t = &candidate;
        if (!t) throw Error(e.origin + ": no table named '" + e.table + "'");
        for (const auto& [column, value] : e.where)
            if (!t->find_column(column)) throw Error(e.origin + ": table '" + e.table + "' has no column '" + column + "'");
        for (const auto& [column, value] : e.values) {
            const auto c = t->find_column(column);
            if (!c) throw Error(e.origin + ": table '" + e.table + "' has no column '" + column + "'");
            const std::string doc_name = column + "_doc";  // a plain identifier, for pandas and DVC
            ColumnType type = std::holds_alternative<bool>(value) ? ColumnType::boolean
                              : as_number(value)                   ? ColumnType::real
                                                                   : ColumnType::text;
            if (t->columns()[*c].type == ColumnType::integer && std::holds_alternative<std::int64_t>(value))
                type = ColumnType::integer;
            if (const auto existing = t->find_column(doc_name)) {
                // Two expectations of one column must agree on what it holds.
                const ColumnType held = t->columns()[*existing].type;
                if (held != type && !(held == ColumnType::real && type == ColumnType::integer))
                    throw Error(e.origin + ": column '" + column + "': a " + (type == ColumnType::text ? "text" : type == ColumnType::boolean ? "true/false" : "number") +
                                " here, where another expectation gives it a value of another type");
            } else {
                Column doc = t->columns()[*c];
                doc.label = (doc.label.empty() ? column : doc.label) + " (doc)";
                doc.name = doc_name;
                doc.type = type;
                t->insert_column(*c + 1, doc);
            }
        }
        if (!t->find_column("source")) t->add_column("source", ColumnType::text);
        if (!t->find_column("verdict")) t->add_column("verdict", ColumnType::text);
        bool any = false;
        for (std::size_t r = 0; r < t->row_count(); ++r) {
            if (!row_matches(*t, r, e)) continue;
            any = true;
            const auto v = *t->find_column("verdict");
            if (!e.applies || (applies && !applies(e, *t, r))) {
                summary.not_judged += static_cast<int>(e.values.size());
                if (report::is_null(t->rows()[r][v])) t->set(r, v, std::string("n/a"));
                continue;
            }
            bool pass = true;
            for (const auto& [column, value] : e.values) {
                t->set(r, *t->find_column(column + "_doc"), value);
                const bool ok = value_passes(t->at(r, column), value, e);
                ok ? ++summary.passed : ++summary.missed;
                pass = pass && ok;
            }
            const bool earlier_miss = t->rows()[r][v] == Cell{std::string("miss")};
            t->set(r, v, std::string(pass && !earlier_miss ? "pass" : "miss"));
            // Several expectations may cover one row: keep every source.
            const auto s = *t->find_column("source");
            const auto* earlier = std::get_if<std::string>(&t->rows()[r][s]);
            t->set(r, s, earlier && !earlier->empty() && *earlier != e.source ? *earlier + "; " + e.source : e.source);
        }
        if (!any) summary.unmatched.push_back(e.origin);
    }
    return summary;
}

VerdictCounts count_verdicts(const std::vector<Table>& tables) {
    VerdictCounts counts;
    for (const auto& t : tables) {
        const auto v = t.find_column("verdict");
        if (!v) continue;
        for (const auto& row : t.rows()) {
            const auto* text = std::get_if<std::string>(&row[*v]);
            if (!text || text->empty()) continue;
            if (*text == "pass") ++counts.pass;
            else if (text->starts_with("n/a")) ++counts.not_applicable;
            else ++counts.miss;
        }
    }
    return counts;
}

}  // namespace ffn::report
