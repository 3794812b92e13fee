#pragma once
// The one-row tables of a sweep's runs, kept column by column: for a kind
// whose every run gives one row in the same columns as its first table
// (ExperimentKind::one_row_runs, the width sweep's "run"). A number or a
// boolean takes 8 bytes and a flag, a text the index of its first
// occurrence, and a run's point, seed and id 20 bytes: about 65 bytes a
// run of the width sweep, where a Table a run took about 400. The runs
// table is made from them row by row as it is written (runs_table), so a
// sweep of a million runs never holds it whole.
//
// put() is called from the worker threads, once per run; cells are read
// once every run is in.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "report/table.h"
#include "runner/config.h"

namespace ffn::runner {

class RunRows {
public:
    explicit RunRows(const Plan& plan);

    // Takes run `run`'s table, which must have one row, in columns of the
    // names and types of every other run's (a kind that breaks this is a
    // programming error: std::logic_error).
    void put(std::size_t run, report::Table table);

    // The first run put's table, with its columns and no rows (empty
    // until a put).
    const report::Table& header() const { return header_; }
    // Run `run`'s cell in column `column` of the header; null for a run
    // never put.
    report::Cell cell(std::size_t run, std::size_t column) const;

    // The sweep's runs table, its rows made from `rows` as they are read:
    // `runs` holds its columns (the swept values, the seed, the run id,
    // then the header's), each row is those of run i.
    static void fill_runs_table(report::Table& runs, std::shared_ptr<const RunRows> rows);

private:
    std::vector<report::Cell> runs_row(std::size_t run) const;

    std::vector<std::vector<report::Cell>> point_cells_;  // each point's swept values, as cells
    std::vector<std::uint32_t> point_;
    std::vector<std::uint64_t> seed_, id_;

    std::mutex mutex_;  // header_, texts_ and the allocation of bits_ in put()
    report::Table header_;
    std::size_t columns_ = 0;
    std::vector<std::uint64_t> bits_;  // run-major: run * columns_ + column
    std::vector<std::uint8_t> state_;  // kNull, kValue, or kAbsent for a run never put
    std::vector<std::string> texts_;
    std::unordered_map<std::string, std::uint32_t> text_index_;
};

}  // namespace ffn::runner
