#include "runner/run_cache.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "core/error.h"
#include "core/hash.h"
#include "ffnlab/build_info.h"
#include "io/atomic_file.h"
#include "report/table_io.h"

namespace ffn::runner {

namespace fs = std::filesystem;

namespace {

// report::to_json writes a non-finite real as null (results files have no
// NaN); the cache keeps it as the string "nan", "inf" or "-inf".
Json encode(const report::Table& t) {
    Json j = report::to_json(t);
    for (std::size_t r = 0; r < t.row_count(); ++r)
        for (std::size_t c = 0; c < t.columns().size(); ++c)
            if (const auto* d = std::get_if<double>(&t.rows()[r][c]); d && !std::isfinite(*d))
                j["rows"][r][t.columns()[c].name] = std::isnan(*d) ? "nan" : *d > 0 ? "inf" : "-inf";
    return j;
}

report::Table decode(Json j, const std::string& where) {
    struct Special {
        std::size_t row;
        std::string column;
        double value;
    };
    std::vector<Special> specials;
    if (j.contains("rows") && j["rows"].is_array())
        for (std::size_t r = 0; r < j["rows"].size(); ++r) {
            if (!j["rows"][r].is_object()) continue;
            for (auto& [name, v] : j["rows"][r].items()) {
                if (!v.is_string() || !j.contains("types") || j["types"].value(name, "") != "real") continue;
                const std::string s = v.get<std::string>();
                const double inf = std::numeric_limits<double>::infinity();
                if (s != "nan" && s != "inf" && s != "-inf") throw Error(where + ": '" + s + "' in real column '" + name + "'");
                specials.push_back({r, name, s == "nan" ? std::numeric_limits<double>::quiet_NaN() : s == "inf" ? inf : -inf});
                v = nullptr;
            }
        }
    report::Table t = report::table_from_json(j, where);
    for (const auto& s : specials) t.set(s.row, *t.find_column(s.column), s.value);
    return t;
}

}  // namespace

std::string build_identity() {
    return fmt::format("format {} ffn-lab {} commit {}", kResultFormat, build::version, build::git_commit);
}

bool is_entry_name(const std::string& name) {
    const bool hex = name.size() >= 21 && name.find_first_not_of("0123456789abcdef") == 16 && name.compare(16, 5, ".json") == 0;
    return hex && (name.size() == 21 || (name.size() == 32 && name.compare(21, 5, ".tmp-") == 0));
}

RunCache::RunCache(std::string folder, std::vector<std::string> read_also)
    : folder_(std::move(folder)), read_also_(std::move(read_also)) {}

std::string RunCache::key(const std::string& kind, const Run& run) const {
    const Json values = run.values();
    std::uint64_t h = fnv1a64(fmt::format("{}\n{}\n{}", build_identity(), kind, values.dump()));
    // A loaded model is part of the input: the same path with other bytes
    // is another run. (A file that cannot be read fails the run anyway.)
    if (values.contains("weights") && values["weights"].is_string() && !values["weights"].get<std::string>().empty()) {
        try {
            h = hash_combine(h, io::hash_file(values["weights"].get<std::string>()));
        } catch (const Error&) {
        }
    }
    return fmt::format("{:016x}", h);
}

std::optional<std::vector<report::Table>> RunCache::load(const std::string& kind, const Run& run) const {
    if (!folder_.empty())
        if (auto t = load_from(folder_, kind, run)) return t;
    for (const auto& folder : read_also_)
        if (auto t = load_from(folder, kind, run)) return t;
    return std::nullopt;
}

std::optional<std::vector<report::Table>> RunCache::load_from(const std::string& folder, const std::string& kind, const Run& run) const {
    const std::string path = (fs::path(folder) / (key(kind, run) + ".json")).string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    try {
        const Json doc = Json::parse(io::read_file(path));
        if (doc.value("format", -1) != kResultFormat || doc.value("experiment", "") != kind || doc.value("values", Json()) != run.values() ||
            !doc.contains("tables") || !doc["tables"].is_array() || doc["tables"].empty() ||
            doc.value("tables_hash", "") != fmt::format("{:016x}", fnv1a64(doc["tables"].dump())))
            return std::nullopt;
        std::vector<report::Table> tables;
        for (const auto& t : doc["tables"]) tables.push_back(decode(t, path));
        return tables;
    } catch (const std::exception&) {
        return std::nullopt;  // not an entry this build wrote: the run is computed again and the file replaced
    }
}

bool RunCache::store(const std::string& key, const std::string& kind, const Run& run,
                     const std::vector<report::Table>& tables) const {
    if (folder_.empty()) return true;
    std::error_code ec;
    fs::create_directories(folder_, ec);
    if (ec) return false;
    Json doc;
    doc["format"] = kResultFormat;
    doc["experiment"] = kind;
    doc["run_id"] = run.id_hex();
    doc["values"] = run.values();
    doc["tables"] = Json::array();
    for (const auto& t : tables) doc["tables"].push_back(encode(t));
    doc["tables_hash"] = fmt::format("{:016x}", fnv1a64(doc["tables"].dump()));  // an edit that still parses is no entry
    try {
        io::write_file_atomically((fs::path(folder_) / (key + ".json")).string(), doc.dump() + "\n");
    } catch (const Error&) {
        return false;
    }
    return true;
}

}  // namespace ffn::runner
