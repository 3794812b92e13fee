#pragma once
// Files that appear whole or not at all: write to a temporary file in the same
// folder, flush it to disk, then rename it over the target. A run killed
// mid-write leaves the old file (or none), never half a table.
#include <string>

namespace ffn::io {

// Throws ffn::Error naming the path when any step fails; the temporary file is
// removed on failure.
void write_file_atomically(const std::string& path, const std::string& contents);

// Reads a whole regular file; throws ffn::Error naming the path when it cannot.
std::string read_file(const std::string& path);

// A folder written as one unit. Its files go into a hidden sibling folder
// made at construction (so an unwritable place fails before any work), and
// commit() swaps that folder in with one atomic exchange (Linux's
// renameat2 RENAME_EXCHANGE): a reader of `path`, a killed run or a second
// run writing to the same place meets the whole old set or the whole new
// one, never a mix. An existing `path` must be empty or hold `marker` (a
// folder this class wrote): anything else is refused, since the exchange
// replaces the folder as a whole. A staging folder left by a killed run is
// a hidden ".NAME.staging-*" sibling, never inside `path`.
//
// `keep` names a subfolder that outlives the swap: files written straight
// into path/keep while the set is staged (sweep's run cache, one file per
// finished run, which must survive a kill before commit) are linked into
// the new set at commit. A folder holding only `keep`, itself holding only
// run-cache files (16 hex digits, .json), is accepted as one this class
// wrote.
class StagedFolder {
public:
    StagedFolder(const std::string& path, const std::string& marker, const std::string& keep = "");
    ~StagedFolder();
    StagedFolder(const StagedFolder&) = delete;
    StagedFolder& operator=(const StagedFolder&) = delete;

    // Where to write the file `name` of the set.
    std::string file(const std::string& name) const;
    void commit();

private:
    std::string path_, staging_, keep_;
    bool committed_ = false;
};

}  // namespace ffn::io
