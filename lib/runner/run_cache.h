#pragma once
// Finished runs, kept so that a sweep that is run again (after a kill, a
// crash, or with more seeds) computes only the runs it lacks. Runs are
// deterministic, so a run's tables are a function of what the cache key
// covers: the experiment kind, every resolved value of the run (seed and
// dtype among them), the bytes of a weights file it loads, and the build
// (build_identity()). A run whose config changed has another key and is never
// reused; an entry is also checked against the run before it is used.
//
// One file per run, <folder>/<key>.json, written atomically as the run
// finishes: a kill at any moment loses at most the runs in flight. The
// tables go through JSON exactly: doubles at full precision, and NaN and
// the infinities (which results files write as null) kept as themselves.
#include <optional>
#include <string>
#include <vector>

#include "report/table.h"
#include "runner/config.h"

namespace ffn::runner {

// Raised whenever a change to ffn-lab changes what a run computes (its
// arithmetic or its tables): every entry written before is then stale.
inline constexpr int kResultFormat = 1;

// What the cache key and a shard's fingerprint hold of the build: the
// result format, the version and the git commit. Another build (a rebuild
// at another commit) recomputes rather than trust a raise of
// kResultFormat that someone forgot; a build from an uncommitted tree has
// only its commit to go by.
std::string build_identity();

// Whether `name` is a file the cache writes: an entry (16 hex digits and
// .json) or an entry's temporary file that a kill left (.json.tmp-XXXXXX).
bool is_entry_name(const std::string& name);

class RunCache {
public:
    // An empty folder name: no cache (load finds nothing, store keeps
    // nothing). `read_also`: further folders load looks in (sweep merge's
    // shards); store writes to `folder` only.
    explicit RunCache(std::string folder, std::vector<std::string> read_also = {});

    bool enabled() const { return !folder_.empty() || !read_also_.empty(); }
    // The run's tables when an entry for exactly this run exists. A file
    // that does not parse or belongs to another run is no entry.
    std::optional<std::vector<report::Table>> load(const std::string& kind, const Run& run) const;
    // Files the tables under `key`, which the caller takes from key() just
    // before the run starts: a weights file rewritten while the run trains
    // must not file its tables under the new bytes. False when the entry
    // could not be written (a full disk, a folder removed under it): the
    // cache only saves work, so the sweep goes on.
    bool store(const std::string& key, const std::string& kind, const Run& run,
               const std::vector<report::Table>& tables) const;

    std::string key(const std::string& kind, const Run& run) const;

private:
    std::optional<std::vector<report::Table>> load_from(const std::string& folder, const std::string& kind, const Run& run) const;

    std::string folder_;
    std::vector<std::string> read_also_;
};

}  // namespace ffn::runner
