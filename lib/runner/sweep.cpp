#include "runner/sweep.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fmt/format.h>
#include <sys/stat.h>
#include <fmt/ranges.h>
#include <iterator>
#include <optional>
#include <vector>

#include "core/error.h"
#include "io/atomic_file.h"
#include "report/table_io.h"
#include "runner/estimate.h"
#include "runner/output_set.h"
#include "runner/run_cache.h"

namespace ffn::runner {

namespace {

void make_output_folder(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw Error(dir + ": cannot create the output folder (" + ec.message() + ")");
}

// The folders a sweep makes for what it will write (the run cache, weights,
// figures), taken back if it fails while they are still empty: a run
// refused at run time (NaN weights, say) leaves no empty --out behind. A
// folder that holds something, finished runs to resume from, is kept.
class MadeFolders {
public:
    MadeFolders() = default;
    MadeFolders(const MadeFolders&) = delete;
    MadeFolders& operator=(const MadeFolders&) = delete;
    ~MadeFolders() {
        if (kept_) return;
        // Deepest first, so that a parent is empty by the time its turn comes.
        std::sort(made_.begin(), made_.end(), [](const auto& a, const auto& b) {
            return std::distance(a.begin(), a.end()) > std::distance(b.begin(), b.end());
        });
        std::error_code ec;
        for (const auto& dir : made_)
            if (std::filesystem::is_directory(std::filesystem::symlink_status(dir, ec)) && std::filesystem::is_empty(dir, ec))
                std::filesystem::remove(dir, ec);
    }
    void make(const std::string& dir) {
        std::vector<std::filesystem::path> missing;
        std::error_code ec;
        for (std::filesystem::path p = std::filesystem::path(dir).lexically_normal(); !p.empty() && p != p.root_path();
             p = p.parent_path()) {
            if (std::filesystem::exists(std::filesystem::symlink_status(p, ec))) break;
            missing.push_back(p);
        }
        make_output_folder(dir);
        made_.insert(made_.end(), missing.begin(), missing.end());
    }
    // `dir` itself made here and now, or an error: a folder that appeared
    // since it was named is another sweep's.
    void make_new(const std::string& dir) {
        make(std::filesystem::path(dir).lexically_normal().parent_path().string());
        if (::mkdir(dir.c_str(), 0777) != 0)
            throw Error(errno == EEXIST ? dir + ": another sweep took this folder in the same second; run again for the next one"
                                        : fmt::format("{}: cannot make the folder ({})", dir, std::strerror(errno)));
        made_.emplace_back(std::filesystem::path(dir).lexically_normal());
    }
    void keep() { kept_ = true; }

private:
    std::vector<std::filesystem::path> made_;
    bool kept_ = false;
};

// The whole set (every table as md/csv/json, and the manifest) goes in at
// once: see OutputSet.
void write_outputs(OutputSet& out, const std::string& kind, const std::vector<report::Table>& tables, const Json& manifest) {
    for (const auto& t : tables) {
        io::write_file_atomically(out.file(t.name() + ".md"), [&](const io::Emit& emit) { report::write_markdown(t, emit); });
        io::write_file_atomically(out.file(t.name() + ".csv"), [&](const io::Emit& emit) { report::write_csv(t, emit); });
        io::write_file_atomically(out.file(t.name() + ".json"), [&](const io::Emit& emit) { report::write_results_document(kind, t, emit); });
    }
    out.commit(manifest);
}

// What the request asks that the plan's kind cannot give, refused before
// the work and not after it.
void check_request(const Plan& plan, const SweepRequest& r) {
    const PlotChoice& choice = r.plot_choice;
    if (!r.plot.empty() && !plan.kind->plot) throw Error("--plot: experiment '" + plan.kind->name + "' draws no figures");
    if ((choice.width || choice.seed) && r.plot.empty()) throw Error("--plot-width, --plot-seed: they choose what --plot DIR draws");
    if ((choice.width || choice.seed) && !plan.kind->validate_plot_choice)
        throw Error("--plot-width, --plot-seed: experiment '" + plan.kind->name + "' draws no per-width or per-seed figure");
    if (choice.seed && std::find(plan.seeds.begin(), plan.seeds.end(), *choice.seed) == plan.seeds.end())
        throw Error(fmt::format("--plot-seed {}: the sweep runs seeds {}", *choice.seed, fmt::join(plan.seeds, ", ")));
    if (choice.width || choice.seed) plan.kind->validate_plot_choice(plan, choice);
    if (!r.save_weights.empty() && !plan.kind->saves_weights)
        throw Error("--save-weights: experiment '" + plan.kind->name + "' trains nothing, so it has no weights to save");
}

}  // namespace

namespace {
SweepResult sweep_into(const Plan& plan, const SweepRequest& r, std::optional<OutputSet>& out, MadeFolders& made,
                       const std::string& cache, const std::string& weights, const std::string& plots, bool plots_in_set);
}  // namespace

std::string default_output_folder(const std::string& config_file) {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    const std::filesystem::path folder = std::filesystem::path(kResultsFolder) / std::filesystem::path(config_file).stem();
    // Taken: the folder, or the staging folder or lock beside it of a sweep
    // still writing it.
    const auto taken = [&](const std::string& name) {
        std::error_code ec;
        if (std::filesystem::exists(std::filesystem::symlink_status(folder / name, ec))) return true;
        for (const auto& e : std::filesystem::directory_iterator(folder, ec))
            if (e.path().filename().string().starts_with("." + name + ".")) return true;
        return false;
    };
    std::string name = stamp;
    for (int n = 2; taken(name); ++n) name = fmt::format("{}-{}", stamp, n);
    return (folder / name).string();
}

SweepResult sweep(const Plan& plan, const SweepRequest& r) {
    check_request(plan, r);
    // A cache needs a place for its key: with none (no HOME) the sweep is
    // refused before any folder is made.
    if (!r.cache.empty() || !r.out.empty()) (void)cache_key_path();
    // Declared before the set, so that a failed sweep's empty folders go
    // after the set's own staging folder and lock beside --out.
    MadeFolders made;
    // A bad --out fails before the work, not after it (OutputSet judges the
    // folder and holds it until the new set is in).
    std::optional<OutputSet> out;
    if (!r.out.empty()) {
        const auto parent = std::filesystem::path(r.out).lexically_normal().parent_path();
        if (r.new_out) made.make_new(r.out);
        else if (!parent.empty()) made.make(parent.string());
        out.emplace(r.out, plan.source);
    }
    // Finished runs go to the cache as they finish, straight into OUT/runs
    // (not the staged set), so that a kill before the tables are written
    // keeps them; the staged set takes them over at commit.
    const std::string cache = run_cache_folder(r.cache, r.out);
    // The --out folder is replaced as a whole at the end: a cache inside
    // it, other than its own runs/, would go with the old set.
    if (!r.cache.empty() && out && out->holds(cache) && !same_folder(cache, out->cache()))
        throw Error("--cache " + r.cache + ": inside --out " + r.out + ", which is replaced as a whole; give a folder outside it");
    // Weights and figures inside --out join the set; elsewhere they go where named.
    const auto resolved = [](const std::string& dir, const char* what) { return dir.empty() ? dir : resolve_output_path(dir, what); };
    const std::string weights_named = resolved(r.save_weights, "--save-weights"), plots_named = resolved(r.plot, "--plot");
    const auto placed = [&](const std::string& dir) { return out && !dir.empty() ? out->place(dir) : dir; };
    const std::string weights = placed(weights_named), plots = placed(plots_named);
    const bool plots_in_set = plots != plots_named;
    try {
        return sweep_into(plan, r, out, made, cache, weights, plots, plots_in_set);
    } catch (const Error& e) {
        // The set is filled in a hidden folder beside --out until it is
        // whole: a write that fails names the folder the user gave.
        if (out) throw Error(out->in_user_terms(e.what()), e.code());
        throw;
    }
}

namespace {
SweepResult sweep_into(const Plan& plan, const SweepRequest& r, std::optional<OutputSet>& out, MadeFolders& made,
                       const std::string& cache, const std::string& weights, const std::string& plots, bool plots_in_set) {
    const auto warn = [&](const std::string& line) {
        if (r.warn) r.warn(line);
    };
    for (const auto* dir : {&cache, &weights, &plots})
        if (!dir->empty()) made.make(*dir);
    SweepResult result = execute(plan, {.threads = r.threads,
                                        .on_progress = r.on_progress,
                                        .artifacts = weights,
                                        .cache = cache,
                                        .fresh = r.fresh,
                                        .cache_also = r.shard_caches,
                                        .cached_only = !r.shard_caches.empty()});
    result.cache = cache;
    if (!r.shard_folders.empty()) result.manifest["merged_shards"] = r.shard_folders;
    else record_speed(plan, result.manifest);
    // Figures inside --out are part of its set, so they are drawn before it goes in.
    if (plots_in_set) plan.kind->plot(plan, result.tables, plots, r.plot_choice);
    if (out) {
        write_outputs(*out, plan.kind->name, result.tables, result.manifest);
        for (const auto& kept : out->kept())
            warn(fmt::format("warning: files ffn-lab did not write appeared in {} while it ran; they are kept in {}", out->path(), kept));
    }
    // Said once the tables are in (when they cannot be written, a full
    // disk, the error is the one line), and before figures drawn elsewhere
    // can fail.
    if (const auto lost = result.manifest.value("runs_not_cached", 0); lost > 0)
        warn(fmt::format("warning: {} finished runs could not be kept in {}; a rerun computes them again", lost, cache));
    if (!plots.empty() && !plots_in_set) plan.kind->plot(plan, result.tables, plots, r.plot_choice);
    made.keep();
    return result;
}
}  // namespace

ShardResult sweep_shard(const Plan& plan, const ShardRequest& r) {
    if (r.out.empty()) throw Error("--shard: give --out DIR, the folder for this part's runs (ffn-lab merge joins the folders)");
    (void)cache_key_path();  // the part's runs go to a cache: refused as sweep's is, before a folder is made
    const Shard shard = parse_shard(r.shard);
    const auto dir = std::filesystem::path(resolve_output_path(r.out, "--out"));
    const io::FolderLock lock(dir.string(), plan.source + " --shard " + r.shard, [&](const std::string& holder) {
        throw Error("--out " + r.out + ": being written by another ffn-lab (" + (holder.empty() ? "?" : holder) +
                    "); each shard writes to a folder of its own");
    });
    check_shard_folder(dir.string());
    if (std::filesystem::exists(dir / "manifest.json"))
        throw Error("--out " + r.out + ": holds a sweep's tables; a shard writes to a folder of its own");
    if (std::filesystem::exists(std::filesystem::symlink_status(dir / "shard.json"))) {
        ShardRecord old;
        try {
            old = read_shard_record(dir.string());
        } catch (const Error& e) {
            throw Error("--out " + r.out + ": its shard.json is not one this ffn-lab wrote (" + e.what() +
                        "); write the shard to another folder");
        }
        if (old.fingerprint != plan_fingerprint(plan) || old.shard.index != shard.index || old.shard.count != shard.count)
            throw Error(fmt::format("--out {}: holds shard {}/{} of {}; write shard {}/{} of {} to another folder", r.out,
                                    old.shard.index, old.shard.count, old.config_file, shard.index, shard.count, plan.source));
    }
    ShardResult out{shard, 0, (dir / "runs").string(), {}};
    make_output_folder(out.cache);
    const auto mine = shard_runs(plan, shard);
    out.runs = mine.size();
    const SweepResult result = execute(plan, {.threads = r.threads,
                                              .on_progress = r.on_progress,
                                              .artifacts = r.save_weights,
                                              .cache = out.cache,
                                              .fresh = r.fresh,
                                              .only = mine});
    if (result.manifest.value("runs_not_cached", 0) > 0)
        throw Error(fmt::format("--out {}: {} of the part's runs could not be written to {}", r.out,
                                result.manifest.value("runs_not_cached", 0), out.cache));
    write_shard_record(dir.string(), plan, shard, mine, result.manifest);
    out.manifest = result.manifest;
    return out;
}

}  // namespace ffn::runner
