#pragma once
// The folder a sweep writes with --out DIR, and the rules of what ffn-lab
// owns there (the README's "What ffn-lab owns").
//
// ffn-lab owns a folder it wrote: one whose manifest.json is a regular
// file holding a JSON object that names the experiment and the config file
// and lists, under "output_files", every file of the set by its path
// inside the folder. It owns exactly those files, the folders that hold
// them, the manifest, and runs/ (the run cache: files named by a run's
// key). A file name proves nothing: a manifest.json that does not parse,
// lacks those fields or is not a regular file leaves the folder the
// user's.
//
// A sweep writes a new folder, an empty one or one it owns, and nothing
// else. Anything in the folder that the manifest does not list is the
// user's, and the sweep is refused, naming it, before any work: ffn-lab
// never deletes a file it did not write. Weights and figures asked for
// inside the folder (--save-weights OUT/w, --plot OUT/figs) are written
// into the new set and listed with it.
//
// The old set is deleted file by file, only what its manifest lists (and
// the run cache's entries): a file the user added while the sweep ran
// survives, in the old folder renamed to a visible OUT.kept-TIME.
//
// Symlinks: an --out that is itself a symlink is resolved once and the
// set is written into the folder it points to, the link kept. A symlink
// inside the folder is never followed: it is the user's, and refused as
// above.
//
// One writer at a time (io::FolderLock, from before the folder is judged
// until the new set is in): a second sweep of the same config waits for
// the first and then reuses its runs; a sweep of another config is
// refused, naming the config that holds the folder.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/atomic_file.h"
#include "report/table.h"
#include "runner/config.h"

namespace ffn::runner {

class OutputSet {
public:
    // `out` as the user typed it (trailing slashes allowed), `config_file`
    // the config whose tables it will hold. Throws ffn::Error, before any
    // work, when the folder may not be written.
    OutputSet(const std::string& out, const std::string& config_file);

    // The real folder written (a symlinked --out resolved).
    const std::string& path() const { return path_; }
    // path()/runs: the run cache, written straight into the folder so that
    // a kill keeps finished runs; the set takes them over at commit.
    std::string cache() const;
    // Where to write the folder `user_folder` names (--plot, --save-weights):
    // its place in the staged set when it lies inside path(), else itself.
    std::string place(const std::string& user_folder) const;
    // Whether `user_folder` lies inside path() (and so joins the set).
    bool holds(const std::string& user_folder) const;
    // Where to write the set's file `name`.
    std::string file(const std::string& name) const { return staged_->file(name); }
    // Lists every file of the staged set in `manifest` ("output_files"),
    // writes it as manifest.json and swaps the set in. Of the old set only
    // ffn-lab's own files are deleted.
    void commit(Json manifest);
    // Folders kept because they held files ffn-lab did not write, which
    // arrived while a run ran (renamed to OUT.kept-TIME beside the folder):
    // the command says so.
    const std::vector<std::string>& kept() const { return kept_; }
    // An error's line with the hidden folder being filled named as path(),
    // the folder the user gave.
    std::string in_user_terms(const std::string& message) const;

private:
    std::string path_, config_path_;
    std::vector<std::string> kept_;
    std::unique_ptr<io::FolderLock> lock_;
    std::unique_ptr<io::StagedFolder> staged_;
};

// The folder an output path names: trailing slashes dropped, and a symlink
// resolved once to the folder it points to. Throws ffn::Error naming
// `what` (the option) for a name too long, a symlink loop or a link to
// nowhere.
std::string resolve_output_path(const std::string& path, const std::string& what);

// The folder of a sweep's run cache: `cache` (--cache) when given, else
// OUT/runs of `out` (--out), else none (""). Both resolved as
// resolve_output_path does.
std::string run_cache_folder(const std::string& cache, const std::string& out);

// Judges `folder` by the rules above, and throws ffn::Error when a sweep
// of `config_file` may not replace it: not a folder, not one ffn-lab wrote,
// holding files ffn-lab did not write (listed), or another config's tables.
void check_output_folder(const std::string& folder, const std::string& config_file);

// Judges the folder of `sweep --shard I/N --out DIR`: it may hold only
// shard.json and runs/ (a real folder of run-cache entries); anything else
// is refused, named, before any work.
void check_shard_folder(const std::string& folder);

// A folder a sweep wrote with --out, read back: its manifest and its
// tables (the set's top-level NAME.json files, in the order the manifest
// lists them). Throws ffn::Error naming the folder when it is not one
// ffn-lab wrote (by the rule above) or a table does not read.
struct ResultFolder {
    std::string path;
    Json manifest;
    std::vector<report::Table> tables;
};
ResultFolder read_result_folder(const std::string& folder);
// The same without its tables (the manifest alone is read).
ResultFolder read_result_folder_manifest(const std::string& folder);
// The same, or nullopt when `folder` holds no manifest.json by that rule
// (or is gone): one read, so a folder cannot vanish between a test and a
// read.
std::optional<ResultFolder> find_result_folder_manifest(const std::string& folder);

// Whether `inner` is `outer` or lies inside it, and whether `a` and `b`
// name one place (a folder or a file), as paths on disk (symlinks in
// existing parts resolved).
bool is_inside(const std::string& inner, const std::string& outer);
bool same_folder(const std::string& a, const std::string& b);

}  // namespace ffn::runner
