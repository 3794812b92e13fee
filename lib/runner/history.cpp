#include "runner/history.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <map>
#include <set>

#include "core/error.h"
#include "report/table_io.h"
#include "runner/output_set.h"

namespace ffn::runner {

namespace fs = std::filesystem;

namespace {

report::Cell text_or_null(const Json& m, const char* key) {
    return m.contains(key) && m[key].is_string() ? report::Cell(m[key].get<std::string>()) : report::Cell{};
}

report::Cell integer_or_null(const Json& m, const char* key) {
    return m.contains(key) && m[key].is_number_integer() ? report::Cell(m[key].get<std::int64_t>()) : report::Cell{};
}

// Objects opened key by key (arrays and scalars are values), under `path`.
void flatten_objects(const Json& value, const std::string& path, std::map<std::string, Json>& out) {
    if (!value.is_object() || value.empty()) {
        out[path] = value;
        return;
    }
    for (const auto& [key, inner] : value.items()) flatten_objects(inner, path + "/" + key, out);
}

std::string compact(const Json& value) {
    constexpr std::size_t kMost = 80;
    std::string text = value.is_string() ? value.get<std::string>() : value.dump();
    if (text.size() <= kMost) return text;
    std::size_t cut = kMost - 3;
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    return text.substr(0, cut) + "...";
}

// The headline of a result folder (result_folders' `headline` column), or
// "" when it has none that can be read.
std::string headline_of(const ResultFolder& r, const std::vector<ExperimentKind>& kinds) {
    constexpr std::size_t kFewRows = 16, kMostValues = 6;
    const std::string experiment = r.manifest.value("experiment", Json("")).is_string() ? r.manifest.value("experiment", "") : "";
    const auto kind = std::find_if(kinds.begin(), kinds.end(), [&](const ExperimentKind& k) { return k.name == experiment; });
    if (kind == kinds.end() || !r.manifest.contains("output_files") || !r.manifest["output_files"].is_array()) return "";
    std::vector<std::string> tables;  // the folder's tables, in the order written
    for (const auto& f : r.manifest["output_files"]) {
        const fs::path file = f.is_string() ? f.get<std::string>() : "";
        if (!file.has_parent_path() && file.extension() == ".json" && file != "manifest.json") tables.push_back(file.stem().string());
    }
    const auto pick = [&](const report::Table& t, const std::vector<std::string>& wanted) -> std::optional<std::size_t> {
        // A measured number before a count (params: ffn_share before
        // attn_weights, width: rmse_median before seeds).
        // The kind's order where it lists them, else the table's.
        std::vector<std::size_t> order;
        for (const auto& name : wanted)
            if (const auto c = t.find_column(name)) order.push_back(*c);
        for (std::size_t c = 0; wanted.empty() && c < t.columns().size(); ++c) order.push_back(c);
        for (const auto type : {report::ColumnType::real, report::ColumnType::integer})
            for (const std::size_t c : order) {
                const auto& column = t.columns()[c];
                const bool names_rows = std::find(t.keys().begin(), t.keys().end(), column.name) != t.keys().end();
                if (column.type == type && !names_rows && !column.volatile_) return c;
            }
        return std::nullopt;
    };
    const auto tries = [&](bool headline_tables) -> std::string {
        for (const auto& name : tables) {
            const auto wanted = kind->headlines.find(name);
            if (headline_tables != (wanted != kind->headlines.end())) continue;
            try {
                for (const auto& t : report::read_tables((fs::path(r.path) / (name + ".json")).string())) {
                    if (t.name() != name || (!headline_tables && t.row_count() > kFewRows)) continue;
                    const auto c = pick(t, headline_tables ? wanted->second : std::vector<std::string>{});
                    if (!c) continue;
                    std::vector<std::string> values;
                    for (std::size_t row = 0; row < std::min(t.row_count(), kMostValues); ++row) {
                        const auto& cell = t.rows()[row][*c];
                        const auto v = report::as_number(cell);
                        values.push_back(std::holds_alternative<std::int64_t>(cell) ? std::to_string(std::get<std::int64_t>(cell))
                                         : v                                       ? fmt::format("{:.4g}", *v)
                                                                                   : "-");
                    }
                    return fmt::format("{}.{}: {}{}", name, t.columns()[*c].name, fmt::join(values, ", "),
                                       t.row_count() > kMostValues ? fmt::format(", ... ({} rows)", t.row_count()) : "");
                }
            } catch (const Error&) {
                // A table that cannot be read has no headline; the row stays.
            }
        }
        return "";
    };
    const std::string found = tries(true);
    return found.empty() ? tries(false) : found;
}

// The result folders at and under `folder`, with their start times; a set's
// own folders (weights, figures) are not searched. A folder that vanishes
// while it is listed (a set deleted, a sweep's staging folder renamed) is
// passed over; one that cannot be read is named.
void find_sets(const fs::path& folder, std::vector<std::pair<std::string, ResultFolder>>& found, std::vector<std::string>& unreadable) {
    if (auto r = find_result_folder_manifest(folder.string())) {
        const std::string started = r->manifest.value("started_utc", Json("")).is_string() ? r->manifest.value("started_utc", "") : "";
        found.emplace_back(started, std::move(*r));
        return;
    }
    std::error_code ec;
    if (fs::is_regular_file(fs::symlink_status(folder / "manifest.json", ec))) unreadable.push_back(folder.string());
    std::vector<fs::path> inner;
    for (fs::directory_iterator it(folder, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        // A hidden folder is a sweep's staging folder or a replaced set on
        // its way out, never a set of the user's.
        if (it->path().filename().string().starts_with(".")) continue;
        // Each entry's own error: one that vanished since the listing is
        // passed over and the listing goes on.
        std::error_code entry;
        if (fs::is_directory(it->symlink_status(entry)) && !entry) inner.push_back(it->path());
    }
    if (ec == std::errc::no_such_file_or_directory || ec == std::errc::not_a_directory) return;
    if (ec) throw Error(folder.string() + ": " + ec.message());
    for (const auto& f : inner) find_sets(f, found, unreadable);
}

}  // namespace

report::Table result_folders(const std::vector<std::string>& roots, const std::vector<ExperimentKind>* kinds,
                             const std::vector<std::string>& also, std::vector<std::string>* unreadable) {
    std::vector<std::pair<std::string, ResultFolder>> found;
    std::vector<std::string> passed_over;
    for (const std::string& root : roots) {
        std::error_code ec;
        if (fs::exists(root, ec) && !fs::is_directory(root, ec))
            throw Error(root + ": a file, not a folder (results lists the folders that sweeps wrote with --out)");
        if (!fs::is_directory(root, ec)) throw Error(root + ": no such folder (results lists the folders that sweeps wrote with --out)");
        find_sets(root, found, passed_over);
    }
    if (unreadable) *unreadable = std::move(passed_over);
    std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
        return std::tie(a.first, a.second.path) < std::tie(b.first, b.second.path);
    });

    report::Table t("results");
    using report::ColumnType;
    t.add_column("folder", ColumnType::text)
        .add_column("experiment", ColumnType::text)
        .add_column("config", ColumnType::text)
        .add_column("overrides", ColumnType::text)
        .add_column("commit", ColumnType::text)
        .add_column("started_utc", ColumnType::text)
        .add_column("wall_seconds", ColumnType::real, 3)
        .add_column("runs", ColumnType::integer)
        .add_column("computed", ColumnType::integer)
        .add_column("pass", ColumnType::integer)
        .add_column("miss", ColumnType::integer)
        .add_column("not_applicable", ColumnType::integer);
    if (kinds) t.add_column("headline", ColumnType::text);
    // What varied, as `dvc exp show` lays it out: a column per config key
    // (config/lr, config/sweep/model.width) whose value differs between the
    // folders listed, and any that `also` asks for.
    std::vector<std::map<std::string, Json>> configs(found.size());
    std::set<std::string> config_keys;
    for (std::size_t i = 0; i < found.size(); ++i) {
        const Json& m = found[i].second.manifest;
        if (m.contains("config")) flatten_objects(m["config"], "config", configs[i]);
        for (const auto& [key, value] : configs[i]) config_keys.insert(key);
    }
    std::vector<std::string> varied;
    for (const auto& key : config_keys) {
        const bool asked = std::find(also.begin(), also.end(), key) != also.end();
        const auto value_in = [&](const std::map<std::string, Json>& c) { return c.contains(key) ? c.at(key) : Json("(none)"); };
        const bool differs = std::any_of(configs.begin(), configs.end(), [&](const auto& c) { return value_in(c) != value_in(configs.front()); });
        if (asked || differs) varied.push_back(key);
    }
    for (const auto& key : varied) t.add_column(key, ColumnType::text);
    t.add_key("folder");
    std::size_t row_index = 0;
    for (const auto& [started, r] : found) {
        const Json& m = r.manifest;
        std::string overrides;
        if (m.contains("overrides") && m["overrides"].is_array())
            for (const auto& o : m["overrides"])
                if (o.is_string()) overrides += (overrides.empty() ? "" : " ") + o.get<std::string>();
        // The hash shortened as git shortens it; a '-dirty' mark kept: the
        // result came from uncommitted code.
        report::Cell commit = text_or_null(m, "git_commit");
        if (const auto* c = std::get_if<std::string>(&commit); c && c->size() > 10)
            commit = c->substr(0, 10) + (c->ends_with("-dirty") ? "-dirty" : "");
        const Json verdicts = m.contains("verdicts") && m["verdicts"].is_object() ? m["verdicts"] : Json::object();
        std::vector<report::Cell> row = {
            r.path, text_or_null(m, "experiment"), text_or_null(m, "config_file"), overrides, commit, text_or_null(m, "started_utc"),
            m.contains("wall_seconds") && m["wall_seconds"].is_number() ? report::Cell(m["wall_seconds"].get<double>()) : report::Cell{},
            integer_or_null(m, "runs"), integer_or_null(m, "runs_computed"), integer_or_null(verdicts, "pass"),
            integer_or_null(verdicts, "miss"), integer_or_null(verdicts, "n/a")};
        if (kinds) row.push_back(headline_of(r, *kinds));
        const auto& config = configs[row_index];
        for (const auto& key : varied) row.push_back(config.contains(key) ? report::Cell(compact(config.at(key))) : report::Cell{});
        ++row_index;
        t.add_row(std::move(row));
    }
    // What tells folders apart first: the overrides and the verdicts.
    std::vector<std::pair<std::string, std::string>> summary = {{"folder", ""}, {"overrides", ""}, {"pass", ""}, {"miss", ""},
                                                                {"not_applicable", "n/a"}, {"runs", ""}, {"wall_seconds", "wall s"},
                                                                {"started_utc", "started"}, {"config", ""}, {"commit", ""}};
    if (kinds) summary.insert(summary.begin() + 5, {"headline", ""});
    for (std::size_t i = 0; i < varied.size(); ++i) summary.insert(summary.begin() + 2 + static_cast<std::ptrdiff_t>(i), {varied[i], ""});
    t.set_summary(summary);
    return t;
}

report::Table manifest_differences(const Json& a, const Json& b) {
    static const char* const kWhatRan[] = {"experiment", "config_file", "config",  "overrides", "ffn_lab_version", "git_commit",
                                           "build_type", "gemm_isa",    "threads", "seeds",     "runs"};
    std::map<std::string, Json> left, right;
    const auto collect = [](const Json& m, std::map<std::string, Json>& out) {
        if (!m.is_object()) return;
        for (const char* key : kWhatRan)
            if (m.contains(key)) flatten_objects(m[key], key, out);
    };
    collect(a, left);
    collect(b, right);
    std::set<std::string> keys;
    for (const auto& [k, v] : left) keys.insert(k);
    for (const auto& [k, v] : right) keys.insert(k);
    report::Table t("manifests");
    t.add_column("key", report::ColumnType::text).add_column("A", report::ColumnType::text).add_column("B", report::ColumnType::text);
    t.add_key("key");
    // The listed order (what ran, then how), keys within a field sorted.
    for (const char* field : kWhatRan)
        for (const auto& key : keys) {
            if (key != field && !key.starts_with(std::string(field) + "/")) continue;
            const auto l = left.find(key), r = right.find(key);
            if (l != left.end() && r != right.end() && l->second == r->second) continue;
            t.add_row({key, l == left.end() ? "(none)" : compact(l->second), r == right.end() ? "(none)" : compact(r->second)});
        }
    return t;
}

}  // namespace ffn::runner
