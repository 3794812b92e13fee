#pragma once
// Results are data: an experiment returns Tables, writers render them. A Table
// has typed, named columns, each with a display precision; cells may be null
// (a value that does not exist, e.g. a diverged run; a status column says why).
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <utility>
#include <vector>

namespace ffn::report {

enum class ColumnType { integer, real, text, boolean };

struct Column {
    std::string name;
    ColumnType type = ColumnType::real;
    int precision = 6;       // significant digits in markdown; JSON/CSV keep all
    bool volatile_ = false;  // timings and the like: shown, never diffed
    std::string label;  // the terminal view's header (report/terminal.h); the name when empty
    bool operator==(const Column&) const = default;
};

using Cell = std::variant<std::monostate, std::int64_t, double, std::string, bool>;

inline bool is_null(const Cell& c) { return std::holds_alternative<std::monostate>(c); }
// The numeric value of an integer or real cell; nullopt otherwise.
std::optional<double> as_number(const Cell& c);

class Table {
public:
    Table() = default;
    explicit Table(std::string name) : name_(std::move(name)) {}

    const std::string& name() const { return name_; }
    const std::vector<Column>& columns() const { return *columns_; }
    const std::vector<std::vector<Cell>>& rows() const {
        make_rows();
        return rows_;
    }
    std::size_t row_count() const { return source_ ? source_rows_ : rows_.size(); }

    // A table may make its rows when they are read rather than hold them
    // (a sweep's runs table, from the runner's compact store of a million
    // runs): `count` rows, row(i) making the i-th, in column order and
    // types. Writers take them one at a time (for_each_row); rows(), at()
    // and every change make them all, once, and hold them from then on.
    using RowSource = std::function<std::vector<Cell>(std::size_t)>;
    void set_row_source(std::size_t count, RowSource row);
    // f(row) for each row in order, without holding a made row past its call.
    void for_each_row(const std::function<void(const std::vector<Cell>&)>& f) const;

    Table& add_column(std::string name, ColumnType type, int precision = 6, bool is_volatile = false);
    Table& add_column(Column column);
    // Inserts a column at `position`, filling existing rows with null.
    void insert_column(std::size_t position, Column column);
    // Cells in column order; an integer given for a real column is widened.
    // Throws on a count or type mismatch (a programming error, not user input).
    void add_row(std::vector<Cell> cells);
    void set(std::size_t row, std::size_t column, Cell value);
    // Moves the rows out, leaving none.
    std::vector<std::vector<Cell>> take_rows() {
        make_rows();
        return std::exchange(rows_, {});
    }

    // The terminal view's default columns, the few a reader needs, in the
    // order it shows them, each with its label ("" keeps the name); empty:
    // every column. A name the table lacks is skipped (its swept and
    // document columns come and go with the config); a name given twice
    // keeps its first place and its last label.
    void set_summary(const std::vector<std::pair<std::string, std::string>>& columns);
    // The summary's columns, as indices (columns inserted later shift them).
    std::vector<std::size_t> summary() const;
    // The columns whose values name a row (the swept keys, the seed...):
    // `diff` matches rows by them and names rows by them. Empty: by position.
    const std::vector<std::string>& keys() const { return keys_; }
    // Throws std::logic_error when the table has no such column.
    void add_key(const std::string& column);
    // One row per run or per logged step: long, so a terminal prints it only
    // when asked for by name (files always hold it).
    bool long_form() const { return long_form_; }
    void set_long_form() { long_form_ = true; }
    // One row per item of a run (a toy model's feature, a net's unit), the
    // item being its last key: a reader checks what its kind sums up from
    // it, not each row, so an expected table keeps it summed up per group
    // of its other keys (report/expected_tables.h). Files always hold it.
    bool per_item() const { return per_item_; }
    void set_per_item() { per_item_ = true; }

    // Points this table's column list at `other`'s when the two are equal
    // (memory, not meaning: nothing a reader sees changes).
    void share_columns_with(const Table& other);

    // Index of the named column, or nullopt.
    std::optional<std::size_t> find_column(const std::string& name) const;
    const Cell& at(std::size_t row, const std::string& column) const;

private:
    Cell checked(const Column& column, Cell value) const;

    // The column list is shared by copies of a table (and by tables that
    // share_columns_with one) until one of them changes it: a sweep's
    // per-run tables of one kind hold one list between them.
    std::vector<Column>& own_columns();

    void make_rows() const;  // the source's rows into rows_, once

    std::string name_;
    std::shared_ptr<std::vector<Column>> columns_ = std::make_shared<std::vector<Column>>();
    // Mutable for make_rows: a table with a source is not read from two
    // threads at once.
    mutable std::vector<std::vector<Cell>> rows_;
    mutable RowSource source_;
    std::size_t source_rows_ = 0;
    std::vector<std::string> summary_;  // names, so that inserted columns move nothing
    std::vector<std::string> keys_;
    bool long_form_ = false;
    bool per_item_ = false;
};

// The columns of `t` named in `names`, in the order named, as a user who
// types --columns b,a expects (the others dropped; names t lacks, and a
// name given twice, are ignored).
Table only_columns(const Table& t, const std::vector<std::string>& names);

std::string to_string(ColumnType t);
// Integers and reals: the columns writers right-align.
inline bool is_numeric(ColumnType t) { return t == ColumnType::integer || t == ColumnType::real; }
std::optional<ColumnType> parse_column_type(const std::string& s);

// A cell as text: integers exactly, reals with `precision` significant digits
// (or shortest round-trip when precision <= 0), null as "", booleans as
// true/false.
std::string format_cell(const Cell& c, int precision);

// Characters, not bytes, for aligning text: a UTF-8 continuation byte
// (10xxxxxx) starts none.
std::size_t display_width(std::string_view s);

}  // namespace ffn::report
