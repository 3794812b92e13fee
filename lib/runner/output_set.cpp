#include "runner/output_set.h"

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <set>
#include <vector>

#include "core/error.h"
#include "report/table_io.h"
#include "runner/run_cache.h"

namespace ffn::runner {

namespace fs = std::filesystem;

namespace {

constexpr const char* kManifest = "manifest.json";
constexpr const char* kCache = "runs";

// What of `doc` says ffn-lab wrote it: the files it lists, or nullopt.
std::optional<std::set<std::string>> listed_files(const Json& doc) {
    if (!doc.is_object() || !doc.contains("experiment") || !doc["experiment"].is_string() || !doc.contains("config_file") ||
        !doc["config_file"].is_string() || !doc.contains("output_files") || !doc["output_files"].is_array())
        return std::nullopt;
    std::set<std::string> files;
    for (const auto& f : doc["output_files"]) {
        if (!f.is_string()) return std::nullopt;
        const fs::path p = f.get<std::string>();
        // Relative, normal, inside the folder: nothing else is a file of a set.
        if (p.empty() || p.is_absolute() || p.lexically_normal() != p || *p.begin() == "..") return std::nullopt;
        files.insert(p.string());
    }
    return files;
}

std::string named(const std::vector<std::string>& names) {
    constexpr std::size_t kShown = 5;
    std::vector<std::string> shown(names.begin(), names.begin() + static_cast<long>(std::min(names.size(), kShown)));
    return fmt::format("{}{}", fmt::join(shown, ", "),
                       names.size() > kShown ? fmt::format(" and {} more", names.size() - kShown) : std::string());
}

// Deletes what of a replaced set (or a killed run's staging folder) is
// ffn-lab's: the files its manifest lists, the manifest, the run cache's
// entries, then the folders left empty. A folder with no manifest was never
// swapped in (the manifest is written last), so all of it is ffn-lab's.
// Anything else arrived while the run ran (a user's file, or a file put in
// place of the folder): it is kept, the folder renamed to a visible
// OUT.kept-TIME, whose path is returned ("" when nothing was kept).
std::string retire(const fs::path& old, const std::string& out) {
    std::error_code ec;
    const fs::path manifest = old / kManifest;
    const bool folder = fs::is_directory(fs::symlink_status(old, ec));
    if (folder && !fs::exists(fs::symlink_status(manifest, ec))) {
        fs::remove_all(old, ec);
        return "";
    }
    if (folder) {
        std::optional<std::set<std::string>> listed;
        try {
            if (fs::is_regular_file(fs::symlink_status(manifest, ec))) listed = listed_files(load_json_file(manifest.string()));
        } catch (const Error&) {
        }
        const auto remove_file = [&](const fs::path& p) {
            if (fs::is_regular_file(fs::symlink_status(p, ec))) fs::remove(p, ec);
        };
        if (listed) {
            for (const auto& rel : *listed) remove_file(old / rel);
            remove_file(manifest);
        }
        if (fs::is_directory(fs::symlink_status(old / kCache, ec)))
            for (const auto& entry : fs::directory_iterator(old / kCache, ec))
                if (is_entry_name(entry.path().filename().string())) remove_file(entry.path());
        // Empty folders, deepest first; fs::remove takes none that holds anything.
        std::vector<fs::path> folders;
        for (auto it = fs::recursive_directory_iterator(old, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
            if (it->is_directory(ec) && !it->is_symlink(ec)) folders.push_back(it->path());
        std::sort(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) { return a.string().size() > b.string().size(); });
        for (const auto& f : folders) fs::remove(f, ec);
        fs::remove(old, ec);
        if (!fs::exists(fs::symlink_status(old, ec))) return "";
    }
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    std::string kept = out + ".kept-" + stamp;
    for (int n = 2; fs::exists(fs::symlink_status(kept, ec)); ++n) kept = out + ".kept-" + stamp + "-" + std::to_string(n);
    fs::rename(old, kept, ec);
    return ec ? old.string() : kept;
}

}  // namespace

std::string resolve_output_path(const std::string& path, const std::string& what) {
    std::string p = path;
    while (p.size() > 1 && p.back() == '/') p.pop_back();
    if (p.empty()) throw Error(what + ": an empty path");
    if (const auto name = fs::path(p).filename(); name == "." || name == ".." || p == "/")
        throw Error(what + " " + path + ": name a folder of its own (not ., .. or /)");
    std::error_code ec;
    const auto status = fs::symlink_status(p, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
        throw Error(what + " " + path + ": " + ec.message());
    if (!fs::is_symlink(status)) return p;
    const fs::path real = fs::canonical(p, ec);
    if (ec) throw Error(what + " " + path + ": a symlink that leads nowhere (" + ec.message() + ")");
    return real.string();
}

namespace {
fs::path on_disk(const std::string& path) {
    std::error_code ec;
    fs::path p = fs::weakly_canonical(path, ec);
    if (ec) throw Error(path + ": " + ec.message());
    return p;
}
}  // namespace

bool is_inside(const std::string& inner, const std::string& outer) {
    const fs::path x = on_disk(inner), y = on_disk(outer);
    const auto [end, _] = std::mismatch(y.begin(), y.end(), x.begin(), x.end());
    return end == y.end();
}

bool same_folder(const std::string& a, const std::string& b) { return on_disk(a) == on_disk(b); }

namespace {
std::optional<Json> result_manifest(const std::string& folder) {
    std::error_code ec;
    const fs::path manifest = fs::path(folder) / kManifest;
    if (!fs::is_regular_file(fs::symlink_status(manifest, ec))) return std::nullopt;
    try {
        Json doc = load_json_file(manifest.string());
        if (listed_files(doc)) return doc;
    } catch (const Error&) {
    }
    return std::nullopt;
}
}  // namespace

std::optional<ResultFolder> find_result_folder_manifest(const std::string& folder) {
    auto manifest = result_manifest(folder);
    if (!manifest) return std::nullopt;
    return ResultFolder{folder, std::move(*manifest), {}};
}

ResultFolder read_result_folder_manifest(const std::string& folder) {
    auto found = find_result_folder_manifest(folder);
    if (!found)
        throw Error(folder + ": not a folder ffn-lab wrote (no manifest.json naming the experiment, the config and the "
                    "set's files)");
    return std::move(*found);
}

ResultFolder read_result_folder(const std::string& folder) {
    ResultFolder out = read_result_folder_manifest(folder);
    const Json& manifest = out.manifest;
    for (const auto& f : manifest["output_files"]) {
        const fs::path file = f.get<std::string>();
        if (file.has_parent_path() || file.extension() != ".json" || file == kManifest) continue;
        for (auto& t : report::read_tables((fs::path(folder) / file).string())) out.tables.push_back(std::move(t));
    }
    return out;
}

std::string run_cache_folder(const std::string& cache, const std::string& out) {
    if (!cache.empty()) return resolve_output_path(cache, "--cache");
    return out.empty() ? "" : (fs::path(resolve_output_path(out, "--out")) / kCache).string();
}

void check_output_folder(const std::string& folder, const std::string& config_file) {
    std::error_code ec;
    const auto status = fs::symlink_status(folder, ec);
    if (ec && ec != std::errc::no_such_file_or_directory) throw Error("--out " + folder + ": " + ec.message());
    if (!fs::exists(status)) return;
    if (!fs::is_directory(status)) throw Error("--out " + folder + ": exists and is not a folder");

    std::optional<std::set<std::string>> listed;
    std::string theirs, theirs_path;
    const fs::path manifest = fs::path(folder) / kManifest;
    if (fs::is_regular_file(fs::symlink_status(manifest, ec))) {
        try {
            const Json doc = load_json_file(manifest.string());
            listed = listed_files(doc);
            // The config's absolute path where the manifest has one (a
            // relative one depends on where that run started).
            if (listed) {
                theirs = doc["config_file"].get<std::string>();
                theirs_path = doc.value("config_path", Json()).is_string() ? doc["config_path"].get<std::string>() : theirs;
            }
        } catch (const Error&) {
        }
    }
    // Everything in the folder that is not the set's: walked without
    // following a symlink, which is itself the user's.
    std::vector<std::string> foreign;
    bool only_cache = true;
    for (auto it = fs::recursive_directory_iterator(folder, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path rel = it->path().lexically_relative(folder);
        const auto entry = it->symlink_status(ec);
        const bool in_cache = *rel.begin() == kCache;
        if (rel == kManifest && listed) continue;
        if (rel == kCache) {
            if (!fs::is_directory(entry)) foreign.push_back(rel.string() + (fs::is_symlink(entry) ? " (a symlink)" : ""));
            continue;
        }
        if (in_cache) {
            if (!fs::is_regular_file(entry) || !is_entry_name(it->path().filename().string()) || it.depth() != 1)
                foreign.push_back(rel.string());
            continue;
        }
        only_cache = false;
        if (fs::is_directory(entry)) {
            const std::string prefix = rel.string() + "/";
            const bool holds_listed = listed && std::any_of(listed->begin(), listed->end(), [&](const std::string& f) {
                                          return f.starts_with(prefix);
                                      });
            if (!holds_listed) {
                foreign.push_back(prefix);
                it.disable_recursion_pending();
            }
            continue;
        }
        if (!fs::is_regular_file(entry) || !listed || !listed->contains(rel.string()))
            foreign.push_back(rel.string() + (fs::is_symlink(entry) ? " (a symlink)" : ""));
    }
    if (ec) throw Error("--out " + folder + ": cannot list it (" + ec.message() + ")");
    // A folder of finished runs alone: a sweep killed before its first set.
    if (!listed && only_cache && foreign.empty()) return;
    if (!listed)
        throw Error("--out " + folder + ": not a folder ffn-lab wrote (no manifest.json that lists its files); its files would be " +
                    "replaced, so name a new or empty folder");
    std::sort(foreign.begin(), foreign.end());
    if (!foreign.empty())
        throw Error(fmt::format("--out {}: holds {} ffn-lab did not write ({}); ffn-lab never deletes them: move them out or "
                                "name another folder",
                                folder, foreign.size() == 1 ? "a file" : "files", named(foreign)));
    if (!same_folder(theirs_path, config_file))
        throw Error("--out " + folder + ": holds the tables of " + theirs + "; write " + config_file +
                    "'s to another folder (or remove that one)");
}

void check_shard_folder(const std::string& folder) {
    std::error_code ec;
    const auto status = fs::symlink_status(folder, ec);
    if (!fs::exists(status)) return;
    if (!fs::is_directory(status)) throw Error("--out " + folder + ": exists and is not a folder");
    std::vector<std::string> foreign;
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        const std::string name = entry.path().filename().string();
        const auto s = entry.symlink_status(ec);
        if (name == "shard.json" && fs::is_regular_file(s)) continue;
        if (name == kCache && fs::is_directory(s)) {
            for (const auto& e : fs::directory_iterator(entry.path(), ec))
                if (!is_entry_name(e.path().filename().string()) || !fs::is_regular_file(e.symlink_status(ec)))
                    foreign.push_back(std::string(kCache) + "/" + e.path().filename().string());
            continue;
        }
        foreign.push_back(name + (fs::is_symlink(s) ? " (a symlink)" : ""));
    }
    if (ec) throw Error("--out " + folder + ": cannot list it (" + ec.message() + ")");
    std::sort(foreign.begin(), foreign.end());
    if (!foreign.empty())
        throw Error(fmt::format("--out {}: holds {} a shard does not write ({}); ffn-lab never deletes them: name another folder",
                                folder, foreign.size() == 1 ? "a file" : "files", named(foreign)));
}

OutputSet::OutputSet(const std::string& out, const std::string& config_file) : path_(resolve_output_path(out, "--out")) {
    std::error_code ec;
    const std::string me = fs::weakly_canonical(config_file, ec).string();
    config_path_ = me;
    const Json note = {{"config", me}, {"config_file", config_file}};
    lock_ = std::make_unique<io::FolderLock>(path_, note.dump(), [&](const std::string& holder) {
        std::string other = "another ffn-lab run";
        try {
            const Json doc = Json::parse(holder);
            if (doc.value("config", "") == me) return;  // the same config: wait, then reuse its runs
            other = "another ffn-lab running " + doc.value("config_file", std::string("?"));
        } catch (const std::exception&) {
        }
        throw Error("--out " + out + ": being written by " + other + "; wait for it, or name another folder");
    });
    check_output_folder(path_, config_file);
    for (const auto& left : io::staging_leftovers(path_))
        if (auto kept = retire(left, path_); !kept.empty()) kept_.push_back(kept);
    staged_ = std::make_unique<io::StagedFolder>(path_, kCache);
}

std::string OutputSet::cache() const { return (fs::path(path_) / kCache).string(); }

bool OutputSet::holds(const std::string& user_folder) const { return is_inside(user_folder, path_); }

std::string OutputSet::in_user_terms(const std::string& message) const {
    std::string out = message;
    const std::string staging = staged_->staging();
    for (std::size_t at; !staging.empty() && (at = out.find(staging)) != std::string::npos;) out.replace(at, staging.size(), path_);
    return out;
}

std::string OutputSet::place(const std::string& user_folder) const {
    if (!holds(user_folder)) return user_folder;
    std::error_code ec;
    const fs::path rel = fs::weakly_canonical(user_folder, ec).lexically_relative(fs::weakly_canonical(path_, ec));
    if (rel.empty() || rel == "." || *rel.begin() == kCache || rel == kManifest)
        throw Error(user_folder + ": inside --out " + path_ + " where the set's own files go; name a subfolder of it, or another folder");
    return (fs::path(staged_->staging()) / rel).string();
}

void OutputSet::commit(Json manifest) {
    std::vector<std::string> files;
    std::error_code ec;
    const fs::path root = staged_->staging();
    for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const fs::path rel = it->path().lexically_relative(root);
        if (*rel.begin() == kCache) {
            it.disable_recursion_pending();
            continue;
        }
        if (it->is_regular_file(ec)) files.push_back(rel.string());
    }
    if (ec) throw Error("--out " + path_ + ": cannot list the new set (" + ec.message() + ")");
    std::sort(files.begin(), files.end());
    manifest["output_files"] = files;
    manifest["config_path"] = config_path_;
    io::write_file_atomically(file(kManifest), manifest.dump(2) + "\n");
    if (const std::string old = staged_->commit(); !old.empty())
        if (auto kept = retire(old, path_); !kept.empty()) kept_.push_back(kept);
}

}  // namespace ffn::runner
