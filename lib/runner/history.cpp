#include "runner/history.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "core/error.h"
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
    return text.size() > kMost ? text.substr(0, kMost - 3) + "..." : text;
}

void add_folder(const std::string& folder, std::vector<std::pair<std::string, ResultFolder>>& found) {
    ResultFolder r = read_result_folder_manifest(folder);
    const std::string started = r.manifest.value("started_utc", Json("")).is_string() ? r.manifest.value("started_utc", "") : "";
    found.emplace_back(started, std::move(r));
}

}  // namespace

report::Table result_folders(const std::vector<std::string>& roots) {
    std::vector<std::pair<std::string, ResultFolder>> found;
    for (const std::string& root : roots) {
        std::error_code ec;
        if (fs::exists(root, ec) && !fs::is_directory(root, ec))
            throw Error(root + ": a file, not a folder (results lists the folders that sweeps wrote with --out)");
        if (!fs::is_directory(root, ec)) throw Error(root + ": no such folder (results lists the folders that sweeps wrote with --out)");
        if (is_result_folder(root)) {
            add_folder(root, found);
            continue;
        }
        for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
            if (!it->is_directory(ec) || it->is_symlink(ec)) continue;
            if (!is_result_folder(it->path().string())) continue;
            add_folder(it->path().string(), found);
            it.disable_recursion_pending();  // a set's own folders (weights, figures) are not sets
        }
        if (ec) throw Error(root + ": " + ec.message());
    }
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
    t.add_key("folder");
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
        t.add_row({r.path, text_or_null(m, "experiment"), text_or_null(m, "config_file"), overrides, commit,
                   text_or_null(m, "started_utc"),
                   m.contains("wall_seconds") && m["wall_seconds"].is_number() ? report::Cell(m["wall_seconds"].get<double>()) : report::Cell{},
                   integer_or_null(m, "runs"), integer_or_null(m, "runs_computed"), integer_or_null(verdicts, "pass"),
                   integer_or_null(verdicts, "miss"), integer_or_null(verdicts, "n/a")});
    }
    // What tells folders apart first: the overrides and the verdicts.
    t.set_summary({{"folder", ""}, {"overrides", ""}, {"pass", ""}, {"miss", ""}, {"not_applicable", "n/a"}, {"runs", ""},
                   {"wall_seconds", "wall s"}, {"started_utc", "started"}, {"config", ""}, {"commit", ""}});
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
