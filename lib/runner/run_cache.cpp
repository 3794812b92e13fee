#include "runner/run_cache.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fmt/format.h>
#include <limits>
#include <random>
#include <tuple>

#include "core/error.h"
#include "core/hash.h"
#include "ffnlab/build_info.h"
#include "io/atomic_file.h"
#include "report/table_io.h"

namespace ffn::runner {

namespace fs = std::filesystem;

namespace {

constexpr std::size_t kSecretBytes = 32;
constexpr const char* kSegmentPrefix = "seg-";
constexpr const char* kSegmentSuffix = ".ffnruns";
// A longer line is no entry this build wrote (and would cost memory to read).
constexpr std::size_t kMaxLine = 64u << 20;

std::string hex(const unsigned char* bytes, std::size_t n) {
    std::string out;
    out.reserve(2 * n);
    for (std::size_t i = 0; i < n; ++i) out += fmt::format("{:02x}", bytes[i]);
    return out;
}

std::string hmac(const std::string& secret, const std::string& text) {
    unsigned char out[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), reinterpret_cast<const unsigned char*>(text.data()),
         text.size(), out, &length);
    return hex(out, length);
}

bool same_text(const std::string& a, const std::string& b) {
    return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;  // no timing to learn a MAC from
}

// The secret: read, or made on first use (32 random bytes, mode 0600,
// created exclusively so that two processes starting at once agree).
std::string read_or_make_secret() {
    const std::string path = cache_key_path();
    const auto read = [&]() -> std::optional<std::string> {
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
        if (!S_ISREG(st.st_mode)) throw Error("run cache key " + path + ": not a regular file");
        if ((st.st_mode & 077) != 0)
            throw Error(fmt::format("run cache key {}: readable by others (mode {:o}); chmod 600 {}", path, st.st_mode & 0777, path));
        // A key that another user owns could have been planted by that user;
        // so could one in a folder another user (root aside) owns, or that
        // others may write without the sticky bit that keeps them to their
        // own files (as in /tmp). A group-writable folder of the user's own
        // group (umask 002's private groups) is the user's.
        if (st.st_uid != ::geteuid())
            throw Error(fmt::format("run cache key {}: owned by user {}, not by this user ({}); a key must be yours alone", path,
                                    st.st_uid, ::geteuid()));
        const std::string folder = fs::path(path).parent_path().empty() ? "." : fs::path(path).parent_path().string();
        struct stat dir {};
        if (::stat(folder.c_str(), &dir) != 0) throw Error("run cache key " + path + ": its folder cannot be read");
        if (dir.st_uid != ::geteuid() && dir.st_uid != 0)
            throw Error(fmt::format("run cache key {}: the key's folder {} is owned by user {}, not by this user ({}) or root", path,
                                    folder, dir.st_uid, ::geteuid()));
        const bool others_write = (dir.st_mode & S_IWOTH) != 0 || ((dir.st_mode & S_IWGRP) != 0 && dir.st_gid != ::getegid());
        if (others_write && (dir.st_mode & S_ISVTX) == 0)
            throw Error(fmt::format("run cache key {}: its folder {} is writable by others (mode {:o}); chmod go-w {}", path, folder,
                                    dir.st_mode & 0777, folder));
        std::string s = io::read_file(path);
        if (s.size() != kSecretBytes) throw Error("run cache key " + path + ": not a key ffn-lab made (" + std::to_string(s.size()) + " bytes)");
        return s;
    };
    if (auto s = read()) return *s;
    std::error_code ec;
    // A folder made for the key is the user's alone.
    if (const fs::path folder = fs::path(path).parent_path(); !folder.empty() && !fs::exists(folder, ec)) {
        fs::create_directories(folder, ec);
        fs::permissions(folder, fs::perms::owner_all, fs::perm_options::replace, ec);
    }
    unsigned char bytes[kSecretBytes];
    if (RAND_bytes(bytes, sizeof bytes) != 1) throw Error("run cache key: no random bytes from the system");
    const std::string tmp = path + fmt::format(".tmp-{}", ::getpid());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0600);
    if (fd < 0) throw Error("run cache key " + path + ": cannot be made (" + std::strerror(errno) + ")");
    const bool written = ::write(fd, bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes) && ::fsync(fd) == 0;
    ::close(fd);
    // link(2) fails if another process made the key meanwhile: then its key holds.
    const bool linked = written && ::link(tmp.c_str(), path.c_str()) == 0;
    ::unlink(tmp.c_str());
    if (!written) throw Error("run cache key " + path + ": cannot be written");
    (void)linked;
    if (auto s = read()) return *s;
    throw Error("run cache key " + path + ": cannot be read after it was made");
}

// A table's schema (to_json without its rows) and its rows as arrays in
// column order; a non-finite real as "nan", "inf" or "-inf" (JSON has no
// such numbers, and results files write null).
struct Encoded {
    std::string schema;
    Json rows;
};

Encoded encode(const report::Table& t) {
    Json j = report::to_json(t);
    Json rows = Json::array();
    for (std::size_t r = 0; r < t.row_count(); ++r) {
        Json cells = Json::array();
        for (std::size_t c = 0; c < t.columns().size(); ++c) {
            if (const auto* d = std::get_if<double>(&t.rows()[r][c]); d && !std::isfinite(*d))
                cells.push_back(std::isnan(*d) ? "nan" : *d > 0 ? "inf" : "-inf");
            else
                cells.push_back(std::move(j["rows"][r][t.columns()[c].name]));
        }
        rows.push_back(std::move(cells));
    }
    j.erase("rows");
    return {j.dump(), std::move(rows)};
}

report::Table decode(const std::string& schema_text, const Json& rows, const std::string& where) {
    Json j = Json::parse(schema_text);
    const Json& columns = j.at("columns");
    const Json& types = j.at("types");
    struct Special {
        std::size_t row;
        std::string column;
        double value;
    };
    std::vector<Special> specials;
    Json objects = Json::array();
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const Json& cells = rows.at(r);
        if (!cells.is_array() || cells.size() != columns.size()) throw Error(where + ": a row of the wrong length");
        Json object = Json::object();
        for (std::size_t c = 0; c < columns.size(); ++c) {
            const std::string name = columns[c].get<std::string>();
            const Json& v = cells[c];
            if (v.is_string() && types.value(name, "") == "real") {
                const std::string s = v.get<std::string>();
                const double inf = std::numeric_limits<double>::infinity();
                if (s != "nan" && s != "inf" && s != "-inf") throw Error(where + ": '" + s + "' in real column '" + name + "'");
                specials.push_back({r, name, s == "nan" ? std::numeric_limits<double>::quiet_NaN() : s == "inf" ? inf : -inf});
                object[name] = nullptr;
            } else {
                object[name] = v;
            }
        }
        objects.push_back(std::move(object));
    }
    j["rows"] = std::move(objects);
    report::Table t = report::table_from_json(j, where);
    for (const auto& s : specials) t.set(s.row, *t.find_column(s.column), s.value);
    return t;
}

std::string schema_id(const std::string& schema) { return fmt::format("{:016x}", fnv1a64(schema)); }

// What an entry's MAC covers: the key, the payload and the text of every
// schema the payload names, in its order.
std::string signed_text(const std::string& key, const std::string& payload, const std::vector<std::string>& schemas) {
    std::string text = key + "\n" + payload;
    for (const auto& s : schemas) text += "\n" + s;
    return text;
}

bool write_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

std::optional<std::uint64_t> parse_key(const std::string& text) {
    if (text.size() != 16 || text.find_first_not_of("0123456789abcdef") != std::string::npos) return std::nullopt;
    return std::stoull(text, nullptr, 16);
}

}  // namespace

std::string build_identity() {
    return fmt::format("format {} ffn-lab {} commit {}", kResultFormat, build::version, build::git_commit);
}

std::string cache_key_path() {
    if (const char* p = std::getenv("FFNLAB_CACHE_KEY"); p && *p) return p;
    if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return (fs::path(x) / "ffn-lab" / "cache-key").string();
    // Never a shared folder: a key another user could plant there would be
    // trusted by every run of this one.
    const char* home = std::getenv("HOME");
    if (!home || !*home)
        throw Error("run cache: HOME is not set, so its key has no home of this user's; set FFNLAB_CACHE_KEY to a file of "
                    "yours (made if missing) or XDG_CONFIG_HOME, or run without --out and --cache");
    return (fs::path(home) / ".config" / "ffn-lab" / "cache-key").string();
}

bool is_entry_name(const std::string& name) {
    const std::size_t prefix = std::strlen(kSegmentPrefix), suffix = std::strlen(kSegmentSuffix);
    if (name.size() == prefix + 16 + suffix && name.starts_with(kSegmentPrefix) && name.ends_with(kSegmentSuffix))
        return name.substr(prefix, 16).find_first_not_of("0123456789abcdef") == std::string::npos;
    // The store of earlier versions, a file per run (<key>.json, and a
    // kill's <key>.json.tmp-XXXXXX): still ffn-lab's, deleted with the old
    // set, never read.
    const bool hex = name.size() >= 21 && name.find_first_not_of("0123456789abcdef") == 16 && name.compare(16, 5, ".json") == 0;
    return hex && (name.size() == 21 || (name.size() == 32 && name.compare(21, 5, ".tmp-") == 0));
}

RunCache::RunCache(std::string folder, std::vector<std::string> read_also)
    : folder_(std::move(folder)), read_also_(std::move(read_also)) {
    if (enabled()) secret_ = read_or_make_secret();
}

RunCache::~RunCache() {
    if (write_fd_ >= 0) ::close(write_fd_);
}

std::string RunCache::key(const std::string& kind, const Run& run) const {
    std::uint64_t h = hash_combine(fnv1a64(build_identity() + "\n" + kind), run.id);
    // A loaded model and an inputs file are part of the input: the same
    // path with other bytes is another run. (One that cannot be read fails
    // the run anyway.)
    for (const char* key : {"weights", "inputs"}) {
        const auto file = run.point->values.find(key);
        if (file == run.point->values.end() || !file->is_string() || file->get<std::string>().empty()) continue;
        try {
            h = hash_combine(h, io::fingerprint(file->get<std::string>()));
        } catch (const Error&) {
        }
    }
    return fmt::format("{:016x}", h);
}

void RunCache::index_segment(const std::string& path) const {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW);
    if (fd < 0) return;
    struct stat st {};
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        return;
    }
    Segment segment{path, {}};
    const auto number = static_cast<std::uint32_t>(segments_.size());
    std::string buffer, line;
    std::uint64_t offset = 0, line_start = 0;
    char chunk[1 << 16];
    for (;;) {
        const ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        for (ssize_t i = 0; i < n; ++i, ++offset) {
            if (chunk[i] != '\n') {
                if (line.size() < kMaxLine) line += chunk[i];
                continue;
            }
            // A whole line: an entry's key is indexed, a schema kept; anything
            // else (a torn or foreign line) is skipped.
            if (line.size() > 2 && line[0] == 'E' && line[1] == ' ' && line.size() < kMaxLine) {
                if (const auto k = parse_key(line.substr(2, 16)); k && line.size() > 19 && line[18] == ' ')
                    entries_.push_back({*k, Location{number, static_cast<std::uint32_t>(line.size()), line_start}});
            } else if (line.size() > 20 && line[0] == 'S' && line[1] == ' ' && line[18] == ' ') {
                const std::string id = line.substr(2, 16), text = line.substr(19);
                if (schema_id(text) == id) segment.schemas.emplace(id, text);
            }
            line.clear();
            line_start = offset + 1;
        }
    }
    ::close(fd);
    segments_.push_back(std::move(segment));
}

void RunCache::index() const {
    std::call_once(indexed_, [&] {
        std::vector<std::string> folders = read_also_;
        if (!folder_.empty()) folders.insert(folders.begin(), folder_);
        for (const auto& folder : folders) {
            std::error_code ec;
            std::vector<std::string> found;
            for (const auto& e : fs::directory_iterator(folder, ec))
                if (is_entry_name(e.path().filename().string())) found.push_back(e.path().string());
            std::sort(found.begin(), found.end());  // the same index whatever order the directory lists
            for (const auto& path : found) index_segment(path);
        }
        // Stable, so that of entries under one key the first found stays.
        std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.key < b.key; });
        entries_.erase(std::unique(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) { return a.key == b.key; }),
                       entries_.end());
        entries_.shrink_to_fit();
    });
}

const RunCache::Location* RunCache::find(std::uint64_t key) const {
    const auto at = std::lower_bound(entries_.begin(), entries_.end(), key, [](const Entry& e, std::uint64_t k) { return e.key < k; });
    return at != entries_.end() && at->key == key ? &at->at : nullptr;
}

std::size_t RunCache::entries() const {
    index();
    return entries_.size();
}

std::optional<std::vector<report::Table>> RunCache::read_entry(const Location& at, const std::string& kind, const Run& run) const {
    const Segment& segment = segments_.at(at.segment);
    const int fd = ::open(segment.path.c_str(), O_RDONLY | O_NOFOLLOW);
    if (fd < 0) return std::nullopt;
    std::string line(at.length, '\0');
    const ssize_t n = ::pread(fd, line.data(), line.size(), static_cast<off_t>(at.offset));
    ::close(fd);
    if (n != static_cast<ssize_t>(line.size())) return std::nullopt;
    // "E <key> <mac> <payload>"
    if (line.size() < 19 + 64 + 2 || line[83] != ' ') {
        ++rejected_;
        return std::nullopt;
    }
    const std::string key = line.substr(2, 16), mac = line.substr(19, 64), payload = line.substr(84);
    try {
        const Json doc = Json::parse(payload);
        std::vector<std::string> schemas;
        for (const auto& t : doc.at("t")) {
            const auto found = segment.schemas.find(t.at(0).get<std::string>());
            if (found == segment.schemas.end()) throw Error("a schema the segment lacks");
            schemas.push_back(found->second);
        }
        if (!same_text(hmac(secret_, signed_text(key, payload, schemas)), mac)) throw Error("not authentic");
        if (doc.at("x").get<std::string>() != kind || doc.at("r").get<std::string>() != run.id_hex())
            throw Error("another run's entry");
        std::vector<report::Table> tables;
        for (std::size_t i = 0; i < schemas.size(); ++i) tables.push_back(decode(schemas[i], doc["t"][i].at(1), segment.path));
        if (tables.empty()) throw Error("no tables");
        return tables;
    } catch (const std::exception&) {
        ++rejected_;  // computed again, and counted in the manifest
        return std::nullopt;
    }
}

std::optional<std::vector<report::Table>> RunCache::load(const std::string& kind, const Run& run) const {
    if (!enabled()) return std::nullopt;
    index();
    const auto k = parse_key(key(kind, run));
    const Location* found = find(*k);
    if (!found) return std::nullopt;
    return read_entry(*found, kind, run);
}

bool RunCache::holds(const std::string& kind, const Run& run) const {
    if (!enabled()) return false;
    index();
    return find(*parse_key(key(kind, run))) != nullptr;
}

bool RunCache::store(const std::string& key, const std::string& kind, const Run& run,
                     const std::vector<report::Table>& tables) const {
    if (folder_.empty()) return true;
    std::vector<Encoded> encoded;
    for (const auto& t : tables) encoded.push_back(encode(t));
    Json doc = Json::object();
    doc["x"] = kind;
    doc["r"] = run.id_hex();
    doc["t"] = Json::array();
    std::vector<std::string> schemas;
    for (auto& e : encoded) {
        doc["t"].push_back(Json::array({schema_id(e.schema), std::move(e.rows)}));
        schemas.push_back(e.schema);
    }
    const std::string payload = doc.dump();
    std::string text;
    const std::lock_guard lock(write_mutex_);
    if (write_fd_ < 0) {
        std::error_code ec;
        fs::create_directories(folder_, ec);
        if (ec) return false;
        std::random_device random;
        write_path_ = (fs::path(folder_) / fmt::format("{}{:08x}{:08x}{}", kSegmentPrefix, random(), random(), kSegmentSuffix)).string();
        write_fd_ = ::open(write_path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0666);
        if (write_fd_ < 0) return false;
    }
    // Schemas first, once per segment; then the entry, as one write so that
    // a kill leaves at most a torn last line.
    std::vector<std::string> new_schemas;
    for (const auto& s : schemas) {
        const std::string id = schema_id(s);
        if (!written_schemas_.count(id) && std::find(new_schemas.begin(), new_schemas.end(), id) == new_schemas.end()) {
            new_schemas.push_back(id);
            text += "S " + id + " " + s + "\n";
        }
    }
    text += "E " + key + " " + hmac(secret_, signed_text(key, payload, schemas)) + " " + payload + "\n";
    if (!write_all(write_fd_, text)) return false;
    for (const auto& id : new_schemas) written_schemas_.emplace(id, true);
    return true;
}

}  // namespace ffn::runner
