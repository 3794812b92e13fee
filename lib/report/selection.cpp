#include "report/selection.h"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"

namespace ffn::report {

namespace {

bool is_key(const Table& t, const std::string& column) {
    return std::find(t.keys().begin(), t.keys().end(), column) != t.keys().end();
}

// Whether the columns name this table: one of its own, not a key column
// every table of a sweep shares.
bool named_by(const Table& t, const std::vector<std::string>& columns) {
    return std::any_of(columns.begin(), columns.end(), [&](const std::string& c) { return t.find_column(c) && !is_key(t, c); });
}

}  // namespace

Selected select_tables(const std::vector<Table>& tables, const Selection& s, const std::string& kind) {
    std::vector<const Table*> picked;
    std::string known;
    for (const auto& t : tables) known += (known.empty() ? "" : ", ") + t.name();
    for (const auto& name : s.tables) {
        const auto found = std::find_if(tables.begin(), tables.end(), [&](const Table& t) { return t.name() == name; });
        if (found == tables.end()) {
            std::vector<std::string> names;
            for (const auto& t : tables) names.push_back(t.name());
            const auto guess = did_you_mean(name, names);
            throw Error("--table " + name + ": experiment '" + kind + "' has tables " + known +
                        (guess ? " (did you mean '" + *guess + "'?)" : std::string()));
        }
        picked.push_back(&*found);
    }
    if (s.tables.empty())
        for (const auto& t : tables) picked.push_back(&t);

    if (!s.columns.empty()) {
        std::vector<std::string> every;
        for (const Table* t : picked)
            for (const auto& c : t->columns()) every.push_back(c.name);
        for (const auto& name : s.columns)
            if (std::find(every.begin(), every.end(), name) == every.end()) {
                const auto guess = did_you_mean(name, every);
                throw Error("--columns " + name + ": no table printed has that column" +
                            (guess ? " (did you mean '" + *guess + "'?)" : std::string(" (--format json lists every table's columns)")));
            }
        std::erase_if(picked, [&](const Table* t) { return !named_by(*t, s.columns); });
    }

    Selected out;
    for (const Table* t : picked) {
        const bool held_back = t->long_form() && s.tables.empty() && !s.everything;
        if (s.columns.empty() || held_back) {
            out.tables.push_back(t);
        } else {
            out.cut.push_back(std::make_unique<Table>(only_columns(*t, s.columns)));
            out.tables.push_back(out.cut.back().get());
        }
        out.instead.push_back(held_back ? fmt::format("{} rows, one per run or logged step: --table {} prints them, --out "
                                                      "writes them",
                                                      t->row_count(), t->name())
                                        : std::string());
    }
    return out;
}

}  // namespace ffn::report
