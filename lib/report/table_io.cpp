#include "report/table_io.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <functional>
#include <fmt/format.h>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/json.h"

namespace ffn::report {

namespace {

std::string escape_markdown(std::string s) {
    std::string out;
    for (char c : s) {
        if (c == '|') out += '\\';
        out += c == '\n' ? ' ' : c;
    }
    return out;
}

std::string escape_csv(const std::string& s) {
    if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

Json cell_to_json(const Cell& c) {
    if (auto i = std::get_if<std::int64_t>(&c)) return *i;
    if (auto d = std::get_if<double>(&c)) return std::isfinite(*d) ? Json(*d) : Json(nullptr);
    if (auto s = std::get_if<std::string>(&c)) return *s;
    if (auto b = std::get_if<bool>(&c)) return *b;
    return nullptr;
}

Cell cell_from_json(const Json& v, ColumnType type, const std::string& where) {
    if (v.is_null()) return Cell{};
    switch (type) {
        case ColumnType::integer:
            if (v.is_number_integer()) return v.get<std::int64_t>();
            break;
        case ColumnType::real:
            if (v.is_number()) return v.get<double>();
            break;
        case ColumnType::text:
            if (v.is_string()) return v.get<std::string>();
            break;
        case ColumnType::boolean:
            if (v.is_boolean()) return v.get<bool>();
            break;
    }
    throw Error(where + ": value " + v.dump() + " is not of type " + to_string(type));
}


// Splits CSV text into records of fields (RFC 4180: quotes, doubled quotes,
// newlines inside quotes).
std::vector<std::vector<std::string>> parse_csv(const std::string& text, const std::string& where) {
    std::vector<std::vector<std::string>> records;
    std::vector<std::string> record;
    std::string field;
    bool quoted = false, field_started = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"' && !field_started) {
            quoted = field_started = true;
        } else if (c == ',') {
            record.push_back(std::exchange(field, {}));
            field_started = false;
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            record.push_back(std::exchange(field, {}));
            records.push_back(std::exchange(record, {}));
            field_started = false;
        } else {
            field += c;
            field_started = true;
        }
    }
    if (quoted) throw Error(where + ": unterminated quoted field");
    if (field_started || !record.empty()) {
        record.push_back(field);
        records.push_back(record);
    }
    return records;
}

// A field is a number only when it is written as ffn-lab writes one, in
// decimal: "003" (a label) stays text, since a number has no leading zeros,
// and so do "0x1p3", "inf" and "nan", which strtod would read.
Cell cell_from_csv(const std::string& s) {
    if (s.empty()) return Cell{};
    if (s == "true") return true;
    if (s == "false") return false;
    if (s.find_first_not_of("0123456789+-.eE") != std::string::npos) return s;
    const std::size_t digits = s[0] == '-' ? 1 : 0;
    if (s.size() > digits + 1 && s[digits] == '0' && std::isdigit(static_cast<unsigned char>(s[digits + 1])))
        return s;
    std::size_t used = 0;
    try {
        if (s.find_first_of(".eEn") == std::string::npos) {
            const long long i = std::stoll(s, &used);
            if (used == s.size()) return static_cast<std::int64_t>(i);
        }
        const double d = std::stod(s, &used);
        if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
    return s;
}

}  // namespace

// Padded so that the columns line up in a file or a pipe too (padded cells
// are the same markdown); numbers right-aligned, as the ---: marks say.
// Two passes over the rows, the first for the widths: a table of a million
// rows is never held as strings.
void write_markdown(const Table& t, const io::Emit& emit) {
    const auto& cols = t.columns();
    const auto cell = [&](const std::vector<Cell>& row, std::size_t i) { return escape_markdown(format_cell(row[i], cols[i].precision)); };
    std::vector<std::size_t> width(cols.size(), 3);  // "---"
    for (std::size_t i = 0; i < cols.size(); ++i) width[i] = std::max(width[i], display_width(escape_markdown(cols[i].name)));
    // Two passes over the rows (the widths, then the lines), each taking
    // them one at a time: a table whose rows are made when read is never
    // held whole.
    t.for_each_row([&](const std::vector<Cell>& row) {
        for (std::size_t i = 0; i < cols.size(); ++i) width[i] = std::max(width[i], display_width(cell(row, i)));
    });
    const auto right = [&](std::size_t i) { return is_numeric(cols[i].type); };
    std::string line;
    const auto add_padded = [&](const std::string& text, std::size_t i, bool align_right) {
        const std::string pad(width[i] - display_width(text), ' ');
        line += " ";
        line += align_right ? pad + text : text + pad;
        line += " |";
    };
    line = "|";
    for (std::size_t i = 0; i < cols.size(); ++i) add_padded(escape_markdown(cols[i].name), i, false);
    line += "\n|";
    for (std::size_t i = 0; i < cols.size(); ++i)
        line += " " + (right(i) ? std::string(width[i] - 1, '-') + ":" : std::string(width[i], '-')) + " |";
    line += "\n";
    emit(line);
    t.for_each_row([&](const std::vector<Cell>& row) {
        line = "|";
        for (std::size_t i = 0; i < cols.size(); ++i) add_padded(cell(row, i), i, right(i));
        line += "\n";
        emit(line);
    });
}

void write_csv(const Table& t, const io::Emit& emit) {
    std::string line;
    for (std::size_t i = 0; i < t.columns().size(); ++i) line += (i ? "," : "") + escape_csv(t.columns()[i].name);
    line += "\n";
    emit(line);
    t.for_each_row([&](const std::vector<Cell>& row) {
        line.clear();
        for (std::size_t i = 0; i < row.size(); ++i) line += (i ? "," : "") + escape_csv(format_cell(row[i], 0));
        line += "\n";
        emit(line);
    });
}

namespace {
// The header of to_json(t): everything but the rows.
Json table_header(const Table& t) {
    Json j;
    j["name"] = t.name();
    j["columns"] = Json::array();
    j["types"] = Json::object();
    for (const auto& c : t.columns()) {
        j["columns"].push_back(c.name);
        j["types"][c.name] = to_string(c.type);
    }
    Json precision = Json::object(), volatile_columns = Json::array();
    for (const auto& c : t.columns()) {
        if (c.type == ColumnType::real) precision[c.name] = c.precision;
        if (c.volatile_) volatile_columns.push_back(c.name);
    }
    j["precision"] = precision;
    j["volatile"] = volatile_columns;
    if (!t.keys().empty()) j["keys"] = t.keys();
    j["rows"] = Json::array();
    return j;
}

Json row_json(const Table& t, const std::vector<Cell>& row) {
    Json r = Json::object();
    for (std::size_t i = 0; i < row.size(); ++i) r[t.columns()[i].name] = cell_to_json(row[i]);
    return r;
}
}  // namespace

std::string to_markdown(const Table& t) {
    std::string out;
    write_markdown(t, [&](std::string_view piece) { out += piece; });
    return out;
}

std::string to_csv(const Table& t) {
    std::string out;
    write_csv(t, [&](std::string_view piece) { out += piece; });
    return out;
}

Json to_json(const Table& t) {
    Json j = table_header(t);
    for (const auto& row : t.rows()) j["rows"].push_back(row_json(t, row));
    return j;
}

namespace {
// `text` is a document dumped with every table's rows left empty
// ("rows": [], the last member of each): emits it with the tables' rows
// spliced in, in order, each row_text(row) indented to its depth, line by
// line (a row's text holds no raw newline inside a value: JSON escapes
// them in strings). Only the first tables.size() empty lists are filled:
// a manifest after the tables stays as it is.
void splice_rows(const std::string& text, const std::vector<const Table*>& tables,
                 const std::function<std::string(const Table&, const std::vector<Cell>&)>& row_text, const io::Emit& emit) {
    const std::string empty_rows = "\"rows\": []";
    const std::string row_indent(8, ' ');
    std::size_t done = 0, searched = 0;  // emitted up to; looked for empty lists up to
    std::string piece;
    for (const Table* table : tables) {
        const Table& t = *table;
        const std::size_t at = text.find(empty_rows, searched);
        if (at == std::string::npos) break;
        searched = at + empty_rows.size();
        if (t.row_count() == 0) continue;
        emit(std::string_view(text).substr(done, at + empty_rows.size() - 1 - done));
        std::size_t r = 0;
        t.for_each_row([&](const std::vector<Cell>& cells) {
            const std::string row = row_text(t, cells);
            piece = r++ ? ",\n" : "\n";
            for (std::size_t from = 0; from <= row.size();) {
                const std::size_t end = std::min(row.find('\n', from), row.size());
                piece += row_indent;
                piece.append(row, from, end - from);
                if (end < row.size()) piece += '\n';
                from = end + 1;
            }
            emit(piece);
        });
        emit("\n      ]");
        done = at + empty_rows.size();
    }
    emit(std::string_view(text).substr(done));
}

Json document_header(const std::string& experiment, const std::vector<const Table*>& tables, const Json& manifest) {
    Json doc;
    doc["experiment"] = experiment;
    doc["tables"] = Json::array();
    for (const Table* t : tables) doc["tables"].push_back(table_header(*t));
    if (!manifest.is_null()) doc["manifest"] = manifest;
    return doc;
}
}  // namespace

void write_results_document(const std::string& experiment, const Table& t, const io::Emit& emit) {
    const std::vector<const Table*> one{&t};
    splice_rows(document_header(experiment, one, nullptr).dump(2) + "\n", one,
                [](const Table& table, const std::vector<Cell>& row) { return row_json(table, row).dump(2); }, emit);
}

std::string compact_results_document(const std::string& experiment, const std::vector<Table>& tables, const Json& manifest) {
    std::vector<const Table*> all;
    for (const auto& t : tables) all.push_back(&t);
    std::string out;
    splice_rows(document_header(experiment, all, manifest).dump(2) + "\n", all,
                [](const Table&, const std::vector<Cell>& row) {
                    Json cells = Json::array();
                    for (const auto& c : row) cells.push_back(cell_to_json(c));
                    return cells.dump();
                },
                [&](std::string_view piece) { out += piece; });
    return out;
}

Json results_document(const std::string& experiment, const std::vector<Table>& tables,
                      const Json& manifest) {
    Json doc;
    doc["experiment"] = experiment;
    doc["tables"] = Json::array();
    for (const auto& t : tables) doc["tables"].push_back(to_json(t));
    if (!manifest.is_null()) doc["manifest"] = manifest;
    return doc;
}

namespace {
// A table's columns have distinct names (Table refuses a repeat as a bug);
// from a file, a repeat is bad input.
void reject_repeated_columns(const std::vector<std::string>& names, const std::string& where) {
    for (std::size_t i = 0; i < names.size(); ++i)
        for (std::size_t k = 0; k < i; ++k)
            if (names[k] == names[i]) throw Error(where + ": column '" + names[i] + "' appears twice");
}
}  // namespace

Table table_from_json(const Json& j, const std::string& where) {
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string() || !j.contains("rows") ||
        !j["rows"].is_array())
        throw Error(where + ": a table needs a string 'name' and an array 'rows'");
    Table t(j["name"].get<std::string>());
    const std::string here = where + ": table '" + t.name() + "'";
    const Json& rows = j["rows"];
    std::vector<std::string> names;
    if (j.contains("columns") && j["columns"].is_array()) {
        for (const auto& n : j["columns"]) {
            if (!n.is_string()) throw Error(here + ": column names must be strings");
            names.push_back(n.get<std::string>());
        }
    } else if (!rows.empty() && rows[0].is_object()) {
        for (const auto& item : rows[0].items()) names.push_back(item.key());
    }
    reject_repeated_columns(names, here);
    const Json types = j.value("types", Json::object());
    const Json precision = j.value("precision", Json::object());
    const Json volatile_columns = j.value("volatile", Json::array());
    for (const auto& name : names) {
        Column c{.name = name, .type = ColumnType::real, .precision = 6, .volatile_ = false};
        if (types.contains(name)) {
            auto t_ = types[name].is_string() ? parse_column_type(types[name].get<std::string>()) : std::nullopt;
            if (!t_) throw Error(here + ": column '" + name + "' has an unknown type");
            c.type = *t_;
        } else {
            const std::size_t index = t.columns().size();
            for (const auto& r : rows) {
                const Json* v = r.is_object() && r.contains(name) ? &r[name] : r.is_array() && index < r.size() ? &r[index] : nullptr;
                if (v && !v->is_null()) {
                    c.type = column_type_of(*v);
                    break;
                }
            }
        }
        if (precision.contains(name) && precision[name].is_number_integer()) c.precision = precision[name].get<int>();
        for (const auto& v : volatile_columns)
            if (v == name) c.volatile_ = true;
        t.add_column(c);
    }
    for (std::size_t r = 0; r < rows.size(); ++r) {
        // A row is an object of its cells, or (compact_results_document)
        // an array of them in column order.
        const Json& row = rows[r];
        if (!row.is_object() && !row.is_array()) throw Error(here + ": row " + std::to_string(r) + " is not an object or an array");
        if (row.is_array() && row.size() != t.columns().size())
            throw Error(here + ": row " + std::to_string(r) + " has " + std::to_string(row.size()) + " cells, the table " +
                        std::to_string(t.columns().size()) + " columns");
        std::vector<Cell> cells;
        for (std::size_t i = 0; i < t.columns().size(); ++i) {
            const Column& c = t.columns()[i];
            const Json* value = row.is_array() ? &row[i] : nullptr;
            if (row.is_object())
                if (const auto it = row.find(c.name); it != row.end()) value = &*it;
            cells.push_back(value ? cell_from_json(*value, c.type, here + " row " + std::to_string(r) + " column '" + c.name + "'")
                                  : Cell{});
        }
        t.add_row(std::move(cells));
    }
    if (j.contains("keys")) {
        if (!j["keys"].is_array()) throw Error(here + ": 'keys' must be a list of column names");
        for (const auto& k : j["keys"]) {
            if (!k.is_string() || !t.find_column(k.get<std::string>()))
                throw Error(here + ": 'keys' names " + k.dump() + ", which is not one of its columns");
            if (std::find(t.keys().begin(), t.keys().end(), k.get<std::string>()) != t.keys().end())
                throw Error(here + ": 'keys' names " + k.dump() + " twice");
            t.add_key(k.get<std::string>());
        }
    }
    return t;
}

Table table_from_csv(const std::string& text, const std::string& name, const std::string& where) {
    const auto records = parse_csv(text, where);
    if (records.empty()) throw Error(where + ": empty CSV file (expected a header row)");
    const auto& header = records.front();
    std::vector<std::vector<Cell>> cells;
    for (std::size_t r = 1; r < records.size(); ++r) {
        if (records[r].size() != header.size())
            throw Error(where + ": line " + std::to_string(r + 1) + " has " + std::to_string(records[r].size()) +
                        " fields, the header has " + std::to_string(header.size()));
        std::vector<Cell> row;
        for (const auto& f : records[r]) row.push_back(cell_from_csv(f));
        cells.push_back(std::move(row));
    }
    reject_repeated_columns(header, where);
    // A column's type is the widest its cells need: integer < real < text.
    Table t(name);
    for (std::size_t c = 0; c < header.size(); ++c) {
        ColumnType type = ColumnType::integer;
        bool any = false, all_bool = true;
        for (const auto& row : cells) {
            const Cell& v = row[c];
            if (is_null(v)) continue;
            any = true;
            if (!std::holds_alternative<bool>(v)) all_bool = false;
            if (std::holds_alternative<std::string>(v) || std::holds_alternative<bool>(v)) type = ColumnType::text;
            else if (std::holds_alternative<double>(v) && type == ColumnType::integer) type = ColumnType::real;
        }
        if (any && all_bool) type = ColumnType::boolean;
        t.add_column(header[c], any ? type : ColumnType::text, 0);
    }
    for (auto& row : cells) {
        for (std::size_t c = 0; c < row.size(); ++c)
            if (t.columns()[c].type == ColumnType::text && !is_null(row[c]) &&
                !std::holds_alternative<std::string>(row[c]))
                row[c] = format_cell(row[c], 0);
        t.add_row(std::move(row));
    }
    return t;
}

std::vector<Table> read_tables(const std::string& path) {
    const std::string text = io::read_file(path);
    const std::filesystem::path p(path);
    if (p.extension() == ".csv") return {table_from_csv(text, p.stem().string(), path)};
    const Json doc = io::parse_json(text, path);
    std::vector<Table> tables;
    if (doc.is_object() && doc.contains("tables") && doc["tables"].is_array()) {
        for (const auto& t : doc["tables"]) {
            tables.push_back(table_from_json(t, path));
            for (std::size_t i = 0; i + 1 < tables.size(); ++i)
                if (tables[i].name() == tables.back().name())
                    throw Error(path + ": two tables named '" + tables.back().name() + "' (a diff would compare only one)");
        }
    } else if (doc.is_object() && doc.contains("rows")) {
        tables.push_back(table_from_json(doc, path));
    } else {
        throw Error(path + ": expected an ffn-lab results document (an object with 'tables')");
    }
    return tables;
}

Cell cell_of(const Json& v) {
    if (v.is_number_integer()) return v.get<std::int64_t>();
    if (v.is_number()) return v.get<double>();
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

ColumnType column_type_of(const Json& v) {
    if (v.is_number_integer()) return ColumnType::integer;
    if (v.is_number()) return ColumnType::real;
    if (v.is_boolean()) return ColumnType::boolean;
    return ColumnType::text;
}

}  // namespace ffn::report
