#pragma once
// Finished runs, kept so that a sweep that is run again (after a kill, a
// crash, or with more seeds) computes only the runs it lacks. Runs are
// deterministic, so a run's tables are a function of what the cache key
// covers: the experiment kind, every resolved value of the run (seed and
// dtype among them), the bytes of a weights file it loads, and the build
// (build_identity()). A run whose config changed has another key and is
// never reused.
//
// The store: a folder of segment files, one per process that writes
// (seg-<random>.ffnruns), each appended to, a line per entry, as runs
// finish. No two processes write one file, so the array tasks of a
// cluster job can share a folder on a network file system without locks;
// a million runs are a few files, not a million. A kill at any moment
// loses at most the runs in flight and leaves at most a torn last line,
// which readers skip. Readers index every segment's entries by key
// (16 bytes an entry in memory) and read an entry when a run asks for it.
//
// Lines: "S <id> <schema>" holds a table's columns once per segment;
// "E <key> <mac> <payload>" a run's tables, each as its schema id and its
// rows. The tables go through JSON exactly: doubles at full precision, and
// NaN and the infinities kept as themselves.
//
// Trust: each entry carries an HMAC-SHA256 over its key, its payload and
// the schemas it uses, under a per-user secret kept outside the cache
// (cache_key_path(), mode 0600, made on first use). An entry that fails it
// (edited, forged, copied from another user's cache, damaged) is not used:
// the run is computed again, and the sweep's manifest counts it
// (runs_rejected). Whoever can read the key file can forge entries, as
// anyone who can write the cache could before.
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"

namespace ffn::runner {

// Raised whenever a change to ffn-lab changes what a run computes (its
// arithmetic or its tables): every entry written before is then stale.
inline constexpr int kResultFormat = 2;

// What the cache key and a shard's fingerprint hold of the build: the
// result format, the version and the git commit. Another build (a rebuild
// at another commit) recomputes rather than trust a raise of
// kResultFormat that someone forgot; a build from an uncommitted tree has
// only its commit to go by.
std::string build_identity();

// Where the cache's secret is: $FFNLAB_CACHE_KEY when set, else
// $XDG_CONFIG_HOME/ffn-lab/cache-key, else ~/.config/ffn-lab/cache-key;
// with none of the three, throws ffn::Error saying how to name one (never
// a shared folder). The key and its folder must belong to this user.
std::string cache_key_path();

// Whether `name` is a file the store writes: a segment
// (seg-<16 hex digits>.ffnruns), or a file of the one-file-per-run store
// of earlier versions, which is never read.
bool is_entry_name(const std::string& name);

class RunCache {
public:
    // An empty folder name: no cache (load finds nothing, store keeps
    // nothing). `read_also`: further folders load looks in (sweep merge's
    // shards); store writes to `folder` only. Throws ffn::Error when the
    // secret cannot be read or made, or is readable by others.
    explicit RunCache(std::string folder, std::vector<std::string> read_also = {});
    ~RunCache();
    RunCache(const RunCache&) = delete;
    RunCache& operator=(const RunCache&) = delete;

    bool enabled() const { return !folder_.empty() || !read_also_.empty(); }
    // The run's tables when an authentic entry for this run exists.
    std::optional<std::vector<report::Table>> load(const std::string& kind, const Run& run) const;
    // Whether the index has an entry under this run's key, unread and
    // unauthenticated: what an estimate counts as probably reused.
    bool holds(const std::string& kind, const Run& run) const;
    // Files the tables under `key`, which the caller takes from key() just
    // before the run starts: a weights file rewritten while the run trains
    // must not file its tables under the new bytes. False when the entry
    // could not be written (a full disk, a folder removed under it): the
    // cache only saves work, so the sweep goes on. Safe from several threads.
    bool store(const std::string& key, const std::string& kind, const Run& run,
               const std::vector<report::Table>& tables) const;

    std::string key(const std::string& kind, const Run& run) const;
    // Entries found for a run that failed authentication (the run was
    // computed, or in merge refused).
    std::size_t rejected() const { return rejected_.load(); }
    // Every entry the folders hold, by key (what `load` may find).
    std::size_t entries() const;

private:
    struct Location {
        std::uint32_t segment;
        std::uint32_t length;
        std::uint64_t offset;
    };
    struct Segment {
        std::string path;
        std::map<std::string, std::string> schemas;  // id -> schema text
    };
    void index() const;
    void index_segment(const std::string& path) const;
    const Location* find(std::uint64_t key) const;
    std::optional<std::vector<report::Table>> read_entry(const Location& at, const std::string& kind, const Run& run) const;

    std::string folder_;
    std::vector<std::string> read_also_;
    std::string secret_;
    mutable std::once_flag indexed_;
    mutable std::vector<Segment> segments_;
    // Sorted by key, the first found of each: 24 bytes an entry, where a
    // hash map's nodes took about 56 (a rerun of 10^6 runs reads them all).
    struct Entry {
        std::uint64_t key;
        Location at;
    };
    mutable std::vector<Entry> entries_;
    mutable std::atomic<std::size_t> rejected_{0};
    // The segment this process appends to, opened at the first store.
    mutable std::mutex write_mutex_;
    mutable int write_fd_ = -1;
    mutable std::string write_path_;
    mutable std::map<std::string, bool> written_schemas_;
};

}  // namespace ffn::runner
