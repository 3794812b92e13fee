#include "report/table.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ffn::report {

std::optional<double> as_number(const Cell& c) {
    if (auto i = std::get_if<std::int64_t>(&c)) return static_cast<double>(*i);
    if (auto d = std::get_if<double>(&c)) return *d;
    return std::nullopt;
}

std::vector<Column>& Table::own_columns() {
    if (columns_.use_count() > 1) columns_ = std::make_shared<std::vector<Column>>(*columns_);
    return *columns_;
}

void Table::share_columns_with(const Table& other) {
    if (columns_ != other.columns_ && *columns_ == *other.columns_) columns_ = other.columns_;
}

Table& Table::add_column(std::string name, ColumnType type, int precision, bool is_volatile) {
    return add_column(Column{.name = std::move(name), .type = type, .precision = precision, .volatile_ = is_volatile});
}

Table& Table::add_column(Column column) {
    insert_column(columns_->size(), std::move(column));
    return *this;
}

void Table::set_row_source(std::size_t count, RowSource row) {
    rows_.clear();
    source_ = std::move(row);
    source_rows_ = count;
}

void Table::make_rows() const {
    if (!source_) return;
    // Made aside: a source that throws half-way leaves the table as it was.
    std::vector<std::vector<Cell>> made;
    made.reserve(source_rows_);
    for (std::size_t i = 0; i < source_rows_; ++i) made.push_back(source_(i));
    rows_ = std::move(made);
    source_ = nullptr;
}

void Table::for_each_row(const std::function<void(const std::vector<Cell>&)>& f) const {
    if (!source_) {
        for (const auto& row : rows_) f(row);
        return;
    }
    for (std::size_t i = 0; i < source_rows_; ++i) f(source_(i));
}

void Table::insert_column(std::size_t position, Column column) {
    make_rows();
    if (find_column(column.name))
        throw std::logic_error("table '" + name_ + "': duplicate column '" + column.name + "'");
    auto& columns = own_columns();
    columns.insert(columns.begin() + static_cast<std::ptrdiff_t>(position), std::move(column));
    for (auto& row : rows_) {
        // Rebuilt rather than vector::insert, which trips GCC 12's
        // -Wmaybe-uninitialized false positive on std::variant.
        std::vector<Cell> widened;
        widened.reserve(row.size() + 1);
        for (std::size_t i = 0; i <= row.size(); ++i) {
            if (i == position) widened.emplace_back(std::monostate{});
            if (i < row.size()) widened.push_back(std::move(row[i]));
        }
        row = std::move(widened);
    }
}

Cell Table::checked(const Column& column, Cell value) const {
    if (is_null(value)) return value;
    switch (column.type) {
        case ColumnType::integer:
            if (std::holds_alternative<std::int64_t>(value)) return value;
            break;
        case ColumnType::real:
            if (auto n = as_number(value)) return *n;
            break;
        case ColumnType::text:
            if (std::holds_alternative<std::string>(value)) return value;
            break;
        case ColumnType::boolean:
            if (std::holds_alternative<bool>(value)) return value;
            break;
    }
    throw std::logic_error("table '" + name_ + "': wrong cell type for column '" + column.name + "'");
}

void Table::add_row(std::vector<Cell> cells) {
    make_rows();
    if (cells.size() != columns_->size())
        throw std::logic_error("table '" + name_ + "': row has " + std::to_string(cells.size()) +
                               " cells, table has " + std::to_string(columns_->size()) + " columns");
    for (std::size_t i = 0; i < cells.size(); ++i) cells[i] = checked((*columns_)[i], std::move(cells[i]));
    rows_.push_back(std::move(cells));
}

void Table::set(std::size_t row, std::size_t column, Cell value) {
    make_rows();
    rows_.at(row).at(column) = checked(columns_->at(column), std::move(value));
}

std::vector<std::size_t> Table::summary() const {
    std::vector<std::size_t> out;
    for (const auto& name : summary_)
        if (const auto i = find_column(name)) out.push_back(*i);
    return out;
}

void Table::set_summary(const std::vector<std::pair<std::string, std::string>>& columns) {
    for (const auto& [name, label] : columns) {
        const auto i = find_column(name);
        if (!i) continue;
        if (std::find(summary_.begin(), summary_.end(), name) == summary_.end()) summary_.push_back(name);
        own_columns()[*i].label = label;
    }
}

void Table::add_key(const std::string& column) {
    if (!find_column(column)) throw std::logic_error("table '" + name_ + "': no column '" + column + "' to key rows by");
    keys_.push_back(column);
}

std::size_t display_width(std::string_view s) {
    return static_cast<std::size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

Table only_columns(const Table& t, const std::vector<std::string>& names) {
    std::vector<std::size_t> kept;
    Table out(t.name());
    for (const auto& name : names)
        if (const auto i = t.find_column(name); i && std::find(kept.begin(), kept.end(), *i) == kept.end()) {
            kept.push_back(*i);
            out.add_column(t.columns()[*i]);
        }
    for (const auto& row : t.rows()) {
        std::vector<Cell> cells;
        for (const std::size_t i : kept) cells.push_back(row[i]);
        out.add_row(std::move(cells));
    }
    if (t.long_form()) out.set_long_form();
    if (t.per_item()) out.set_per_item();
    for (const auto& k : t.keys())
        if (out.find_column(k)) out.add_key(k);
    return out;
}

std::optional<std::size_t> Table::find_column(const std::string& name) const {
    for (std::size_t i = 0; i < columns_->size(); ++i)
        if ((*columns_)[i].name == name) return i;
    return std::nullopt;
}

const Cell& Table::at(std::size_t row, const std::string& column) const {
    auto c = find_column(column);
    if (!c) throw std::logic_error("table '" + name_ + "': no column '" + column + "'");
    return rows().at(row).at(*c);
}

std::string to_string(ColumnType t) {
    switch (t) {
        case ColumnType::integer: return "integer";
        case ColumnType::real: return "real";
        case ColumnType::text: return "text";
        case ColumnType::boolean: return "boolean";
    }
    return "real";
}

std::optional<ColumnType> parse_column_type(const std::string& s) {
    for (auto t : {ColumnType::integer, ColumnType::real, ColumnType::text, ColumnType::boolean})
        if (to_string(t) == s) return t;
    return std::nullopt;
}

std::string format_cell(const Cell& c, int precision) {
    struct Visitor {
        int precision;
        std::string operator()(std::monostate) const { return ""; }
        std::string operator()(std::int64_t v) const { return std::to_string(v); }
        std::string operator()(bool v) const { return v ? "true" : "false"; }
        std::string operator()(const std::string& v) const { return v; }
        std::string operator()(double v) const {
            if (std::isnan(v)) return "nan";
            if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
            if (v == 0.0) return "0";  // never "-0"
            return precision > 0 ? fmt::format("{:.{}g}", v, precision) : fmt::format("{}", v);
        }
    };
    return std::visit(Visitor{precision}, c);
}

}  // namespace ffn::report
