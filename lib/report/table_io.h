#pragma once
// Tables in and out: markdown, CSV and JSON writers, JSON and CSV readers.
// JSON is the contract other tools read:
//   {"experiment": KIND, "tables": [{"name", "columns": [names...],
//     "types": {column: type}, "rows": [{column: value}...]}], "manifest": {...}}
// Numbers are JSON numbers at full precision; a missing value is null.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "report/table.h"

namespace ffn::report {

using Json = nlohmann::ordered_json;

std::string to_markdown(const Table& t);
std::string to_csv(const Table& t);
Json to_json(const Table& t);

// The same texts in pieces, for files of a million rows: `emit` gets them in
// order, never the whole. write_results_document writes the bytes of
// results_document(experiment, {t}, null).dump(2) and a newline.
void write_markdown(const Table& t, const io::Emit& emit);
void write_csv(const Table& t, const io::Emit& emit);
void write_results_document(const std::string& experiment, const Table& t, const io::Emit& emit);

// The whole results document; `manifest` may be null (expected tables leave it
// out, since it changes with every run).
Json results_document(const std::string& experiment, const std::vector<Table>& tables,
                      const Json& manifest);

// The same document with each table's rows one line each, a JSON array of
// its cells in column order: the compact form expected tables are kept in
// (report/expected_tables.h). table_from_json reads either.
std::string compact_results_document(const std::string& experiment, const std::vector<Table>& tables, const Json& manifest);

// Parses what to_json wrote. `where` names the source in error messages.
Table table_from_json(const Json& j, const std::string& where);
Table table_from_csv(const std::string& text, const std::string& name, const std::string& where);

// A JSON value (a config's, or an untyped file's) as a cell: integers,
// reals, booleans and strings as themselves, anything else (a list, an
// object) as its JSON text; and the column type that holds it.
Cell cell_of(const Json& v);
ColumnType column_type_of(const Json& v);

// Reads a results file: a JSON document (every table in it) or a CSV file (one
// table named after the file). Throws ffn::Error naming the file on any defect.
std::vector<Table> read_tables(const std::string& path);

}  // namespace ffn::report
