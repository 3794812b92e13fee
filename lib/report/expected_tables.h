#pragma once
// Expected tables, check's regression files (pytest-regressions' habit):
// what a config's tables become in experiments/<kind>/expected/<config>.json
// (or a study's expected/), and that file's text. A repository carries them
// and every diff shows them, so they are compact, and still exact:
// - a per-item table (Table::per_item: a feature, a unit per row) is kept as
//   its summary per group of its other keys (per_item_summary);
// - each row is one line, a JSON array in column order
//   (compact_results_document), which read_tables reads like object rows.
// No number is rounded: check compares every kept number as written, within
// the config's check tolerance.
#include <string>
#include <vector>

#include "report/table.h"
#include "report/table_io.h"

namespace ffn::report {

// `t` summed up: one row per group of its keys but the last (the item; in
// order of first appearance), keyed by them, then `items` (the group's row
// count) and, per other column that is not volatile: a number's min, mean
// and max over the group's finite cells (null when none: a file holds NaN
// and infinities as null, so they count as missing here too), a boolean's
// count of true, a text's count of distinct values. Named `<name>_summary`.
Table per_item_summary(const Table& t);

// The tables as an expected file keeps them: each per-item table replaced
// by its summary, the others as they are.
std::vector<Table> expected_form(const std::vector<Table>& tables);

// An expected file's tables as check compares them with expected_form(fresh):
// a table that `fresh` holds per item, found whole in the file (written
// before expected tables kept summaries), is summed up the same way.
std::vector<Table> expected_form_of_file(const std::vector<Table>& from_file, const std::vector<Table>& fresh);

// The expected file's text: expected_form(tables), compact, with the
// config it was made from (a later check names the keys that changed).
std::string expected_document(const std::string& experiment, const std::vector<Table>& tables, const Json& config);

}  // namespace ffn::report
