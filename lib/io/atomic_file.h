#pragma once
// Files that appear whole or not at all: write to a temporary file in the same
// folder, flush it to disk, then rename it over the target. A run killed
// mid-write leaves the old file (or none), never half a table.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace ffn::io {

// Throws ffn::Error naming the path when any step fails; the temporary file is
// removed on failure.
void write_file_atomically(const std::string& path, const std::string& contents);

// The same for a file made in pieces: `produce` hands them, in order, to
// the function it is given. A table of a million rows is written without
// ever being one string.
using Emit = std::function<void(std::string_view)>;
void write_file_atomically(const std::string& path, const std::function<void(const Emit&)>& produce);

// Reads a whole regular file; throws ffn::Error naming the path when it cannot.
std::string read_file(const std::string& path);

// fnv1a64 of a whole regular file, read in pieces: a file of any size
// hashes in bounded memory. Throws ffn::Error naming the path.
std::uint64_t hash_file(const std::string& path);

// What a run's input file or folder (a weights file, a checkpoint folder,
// an inputs file) adds to the run cache's key: a file of at most 64 MiB
// by its bytes (hash_file); a larger one by its size, modification time,
// inode and first and last MiB (rehashing a 10 GB shard for every run
// would cost more than the run; a file rewritten in place changes its
// time); a folder by the names and fingerprints of the files directly in
// it. Throws ffn::Error naming the path when it cannot be read.
std::uint64_t fingerprint(const std::string& path);

// A folder written as one unit. Its files go into a hidden sibling folder
// made at construction (so an unwritable place fails before any work), and
// commit() swaps that folder in with one atomic exchange (Linux's
// renameat2 RENAME_EXCHANGE): a reader of `path`, a killed run or a second
// run writing to the same place meets the whole old set or the whole new
// one, never a mix. commit() hands the old set back (it then sits at the
// staging name) for the caller to delete what of it is its own
// (runner::OutputSet). The new folder gets the mode the umask gives a new
// folder, not mkdtemp's 0700.
//
// `keep` names a subfolder that outlives the swap: files written straight
// into path/keep while the set is staged (sweep's run cache, one file per
// finished run, which must survive a kill before commit) are linked into
// the new set at commit.
class StagedFolder {
public:
    explicit StagedFolder(const std::string& path, const std::string& keep = "");
    ~StagedFolder();
    StagedFolder(const StagedFolder&) = delete;
    StagedFolder& operator=(const StagedFolder&) = delete;

    // Where to write the file `name` of the set.
    std::string file(const std::string& name) const;
    // The staged folder itself.
    const std::string& staging() const { return staging_; }
    // Swaps the set in; returns where the old folder now sits, or "" when
    // there was none (or an empty one).
    std::string commit();

private:
    std::string path_, staging_, keep_;
    bool committed_ = false;
};

// The ".NAME.staging-*" folders beside `path` that killed runs left (the
// caller holds the folder's lock, so none is alive).
std::vector<std::string> staging_leftovers(const std::string& path);

// One writer at a time for a folder that may not exist yet: an exclusive
// flock(2) on the hidden file ".NAME.lock" beside it, held until
// destruction, which removes the file. The kernel drops the lock when the
// process ends, kill -9 included, so a killed run never leaves the folder
// locked (its file stays until the next run there). The holder's
// `note` (one line: what it is writing) is kept in the file, after its
// pid, for the next comer. When the lock is taken, `may_wait` gets the
// holder's note (empty when no live holder has written one within 2 s) and
// either throws (ffn::Error: refuse) or returns, and the lock is then
// waited for.
class FolderLock {
public:
    FolderLock(const std::string& path, const std::string& note, const std::function<void(const std::string&)>& may_wait);
    ~FolderLock();
    FolderLock(const FolderLock&) = delete;
    FolderLock& operator=(const FolderLock&) = delete;

private:
    std::string file_;
    int fd_ = -1;
};

}  // namespace ffn::io
