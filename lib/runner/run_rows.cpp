#include "runner/run_rows.h"

#include <algorithm>
#include <bit>
#include <stdexcept>

#include "runner/aggregation.h"

namespace ffn::runner {

namespace {
constexpr std::uint8_t kNull = 0, kValue = 1, kAbsent = 2;

// What a row's cells must agree on. A table read back from the run cache
// keeps its columns' names and types but not every display setting (a
// label), and cached and fresh runs meet in one store.
bool same_names_and_types(const std::vector<report::Column>& a, const std::vector<report::Column>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const report::Column& x, const report::Column& y) { return x.name == y.name && x.type == y.type; });
}
}  // namespace

RunRows::RunRows(const Plan& plan) : point_(plan.runs.size()), seed_(plan.runs.size()), id_(plan.runs.size()) {
    point_cells_.resize(plan.points.size());
    for (const auto& point : plan.points)
        for (const auto& [key, value] : point->swept) point_cells_.at(point->index).push_back(swept_cell(plan, key, value));
    for (const Run& run : plan.runs) {
        point_[run.index] = static_cast<std::uint32_t>(run.point->index);
        seed_[run.index] = run.seed;
        id_[run.index] = run.id;
    }
}

void RunRows::put(std::size_t run, report::Table table) {
    if (table.row_count() != 1)
        throw std::logic_error("table '" + table.name() + "': a one-row run gave " + std::to_string(table.row_count()) + " rows");
    const std::vector<report::Cell> row = table.take_rows().front();
    std::lock_guard lock(mutex_);
    if (bits_.empty()) {
        header_ = std::move(table);
        columns_ = header_.columns().size();
        bits_.assign(point_.size() * columns_, 0);
        state_.assign(point_.size() * columns_, kAbsent);
    } else if (table.name() != header_.name() || !same_names_and_types(table.columns(), header_.columns())) {
        throw std::logic_error("table '" + table.name() + "': a one-row run gave other columns than the runs before it");
    }
    for (std::size_t c = 0; c < columns_; ++c) {
        const report::Cell& cell = row[c];
        std::uint64_t bits = 0;
        if (const auto* i = std::get_if<std::int64_t>(&cell)) bits = std::bit_cast<std::uint64_t>(*i);
        else if (const auto* d = std::get_if<double>(&cell)) bits = std::bit_cast<std::uint64_t>(*d);
        else if (const auto* b = std::get_if<bool>(&cell)) bits = *b ? 1 : 0;
        else if (const auto* s = std::get_if<std::string>(&cell)) {
            const auto [at, added] = text_index_.try_emplace(*s, static_cast<std::uint32_t>(texts_.size()));
            if (added) texts_.push_back(*s);
            bits = at->second;
        }
        bits_[run * columns_ + c] = bits;
        state_[run * columns_ + c] = report::is_null(cell) ? kNull : kValue;
    }
}

report::Cell RunRows::cell(std::size_t run, std::size_t column) const {
    if (column >= columns_ || state_.at(run * columns_ + column) != kValue) return {};
    const std::uint64_t bits = bits_[run * columns_ + column];
    switch (header_.columns()[column].type) {
        case report::ColumnType::integer: return std::bit_cast<std::int64_t>(bits);
        case report::ColumnType::real: return std::bit_cast<double>(bits);
        case report::ColumnType::boolean: return bits != 0;
        case report::ColumnType::text: return texts_.at(bits);
    }
    return {};
}

std::vector<report::Cell> RunRows::runs_row(std::size_t run) const {
    const std::vector<report::Cell>& swept = point_cells_[point_[run]];
    std::vector<report::Cell> cells;
    cells.reserve(swept.size() + 2 + columns_);
    cells.assign(swept.begin(), swept.end());
    cells.push_back(static_cast<std::int64_t>(seed_[run]));
    cells.push_back(run_id_hex(id_[run]));
    for (std::size_t c = 0; c < columns_; ++c) cells.push_back(cell(run, c));
    return cells;
}

void RunRows::fill_runs_table(report::Table& runs, std::shared_ptr<const RunRows> rows) {
    const std::size_t count = rows->point_.size();
    runs.set_row_source(count, [rows = std::move(rows)](std::size_t i) { return rows->runs_row(i); });
}

}  // namespace ffn::runner
