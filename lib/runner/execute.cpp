#include "runner/execute.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fmt/format.h>
#include <iterator>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <unordered_map>

#include <fmt/ranges.h>

#include "core/error.h"
#include "core/stats.h"
#include "core/thread_pool.h"
#include "report/table_io.h"
#include "runner/manifest.h"
#include "runner/run_cache.h"
#include "runner/run_rows.h"

namespace ffn::runner {

std::vector<std::vector<std::size_t>> seed_groups(const Plan& plan) {
    // The runs of a point of the grid: its seeds.
    std::vector<std::vector<std::size_t>> groups(plan.points.size());
    for (const Run& run : plan.runs) groups[run.point->index].push_back(run.index);
    std::erase_if(groups, [](const auto& g) { return g.empty(); });
    return groups;
}

std::vector<std::vector<std::size_t>> work_units(const Plan& plan, const std::vector<bool>& include) {
    std::vector<std::vector<std::size_t>> units;
    if (!plan.kind->run_batch) {
        for (std::size_t i = 0; i < plan.runs.size(); ++i)
            if (include[i]) units.push_back({i});
        return units;
    }
    const std::size_t most = std::max<std::size_t>(1, plan.kind->batch_runs);
    for (const auto& group : seed_groups(plan)) {
        std::vector<std::size_t> kept;
        for (const std::size_t i : group)
            if (include[i]) kept.push_back(i);
        for (std::size_t k = 0; k < kept.size(); k += most)
            units.emplace_back(kept.begin() + static_cast<std::ptrdiff_t>(k),
                               kept.begin() + static_cast<std::ptrdiff_t>(std::min(kept.size(), k + most)));
    }
    return units;
}

namespace {

using PerRun = std::vector<std::vector<report::Table>>;

// A finished run's tables into per_run[i]; with first_in_store (a kind of
// one_row_runs, whose first table the caller has put in the compact
// store), the others (often none: no allocation kept).
void keep(std::size_t i, std::vector<report::Table> tables, PerRun& per_run, bool first_in_store) {
    if (!first_in_store || tables.empty()) {
        per_run[i] = std::move(tables);
        return;
    }
    per_run[i].assign(std::make_move_iterator(tables.begin() + 1), std::make_move_iterator(tables.end()));
    per_run[i].shrink_to_fit();
}

// The runs this call wants (all, or options.only) and which of them the
// cache already holds, their tables taken into per_run. reused is true for
// a run outside options.only too: this call neither computes nor reports it.
struct Wanted {
    std::vector<bool> reused;
    std::size_t wanted = 0, found = 0;
};

Wanted take_cached(const Plan& plan, const ExecuteOptions& options, const RunCache& cache, ThreadPool& pool, PerRun& per_run,
                   RunRows* rows) {
    std::vector<bool> wanted(plan.runs.size(), !options.only);
    if (options.only)
        for (const std::size_t i : *options.only) wanted.at(i) = true;
    std::vector<char> found(plan.runs.size(), 0);
    if (!options.fresh && options.artifacts.empty() && cache.enabled()) {
        // Read and authenticate the entries on the pool: a million of them
        // are a million small reads.
        constexpr std::size_t kChunk = 256;
        pool.parallel_for((plan.runs.size() + kChunk - 1) / kChunk, [&](std::size_t c) {
            for (std::size_t i = c * kChunk; i < std::min(plan.runs.size(), (c + 1) * kChunk); ++i)
                if (wanted[i])
                    if (auto tables = cache.load(plan.kind->name, plan.runs[i])) {
                        if (rows && !tables->empty()) rows->put(i, std::move(tables->front()));
                        keep(i, std::move(*tables), per_run, rows != nullptr);
                        found[i] = 1;
                    }
        });
    }
    Wanted w{std::vector<bool>(plan.runs.size()), 0, 0};
    for (std::size_t i = 0; i < plan.runs.size(); ++i) {
        w.found += wanted[i] && found[i] ? 1 : 0;
        w.wanted += wanted[i] ? 1 : 0;
        w.reused[i] = found[i] != 0 || !wanted[i];
    }
    if (options.cached_only && w.found < w.wanted) {
        std::vector<std::string> missing;
        for (std::size_t i = 0; i < plan.runs.size() && missing.size() < 3; ++i)
            if (!w.reused[i]) missing.push_back("run " + std::to_string(i + 1) + " (" + plan.runs[i].label() + ", id " + plan.runs[i].id_hex() + ")");
        const std::string forged =
            cache.rejected() ? fmt::format(" ({} found but failing authentication: written under another key, or edited)", cache.rejected())
                             : "";
        throw Error(fmt::format("{}: {} of {} runs are in none of the shards{}, e.g. {}", plan.source, w.wanted - w.found, w.wanted,
                                forged, fmt::join(missing, "; ")));
    }
    return w;
}

// Computes the runs not reused, in work units costliest first, each stored
// in the cache as it finishes. Returns how many could not be stored.
std::size_t compute_missing(const Plan& plan, const ExecuteOptions& options, const RunCache& cache, ThreadPool& pool, const Wanted& w,
                            PerRun& per_run, RunRows* rows) {
    std::mutex progress_mutex;
    std::vector<report::Table> prototypes;  // the first run's tables (under progress_mutex)
    std::size_t done = w.found;
    std::atomic<std::size_t> not_cached{0};
    std::vector<bool> to_compute(plan.runs.size());
    for (std::size_t i = 0; i < plan.runs.size(); ++i) to_compute[i] = !w.reused[i];
    // Runs are independent, so the slicing changes no number.
    const std::vector<std::vector<std::size_t>> units = work_units(plan, to_compute);
    // Costliest first (the kind's estimate), so that the last units to start
    // are short and no thread idles at the end; results go by index, so the
    // order changes no number.
    std::vector<std::size_t> order(units.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    if (plan.kind->cost) {
        std::vector<double> cost(units.size(), 0.0);
        for (std::size_t u = 0; u < units.size(); ++u)
            for (const std::size_t i : units[u]) cost[u] += plan.kind->cost(plan.runs[i]);
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
    }
    pool.parallel_for(units.size(), [&](std::size_t next) {
        const std::vector<std::size_t>& unit = units[order[next]];
        try {
            std::vector<Run> runs;
            std::vector<std::string> keys;  // taken before the runs read their inputs (RunCache::store)
            for (std::size_t i : unit) {
                runs.push_back(plan.runs[i]);
                runs.back().artifacts = options.artifacts;
                keys.push_back(cache.enabled() ? cache.key(plan.kind->name, plan.runs[i]) : std::string());
            }
            std::vector<std::vector<report::Table>> tables;
            if (plan.kind->run_batch) tables = plan.kind->run_batch(runs);
            else tables.push_back(plan.kind->run(runs.front()));
            for (std::size_t k = 0; k < unit.size(); ++k) {
                // Into the store first (a copy of one row): a run it refuses
                // is not filed in the cache for every rerun to meet.
                if (rows && !tables[k].empty()) rows->put(unit[k], tables[k].front());
                if (cache.enabled() && !cache.store(keys[k], plan.kind->name, plan.runs[unit[k]], tables[k])) ++not_cached;
                keep(unit[k], std::move(tables[k]), per_run, rows != nullptr);
            }
        } catch (const Error& e) {
            const std::string which = unit.size() == 1 ? "run " + std::to_string(unit.front() + 1)
                                                       : fmt::format("runs {}-{}", unit.front() + 1, unit.back() + 1);
            throw Error(plan.source + ": " + which + ": " + e.what(), e.code());
        }
        std::lock_guard lock(progress_mutex);
        // Runs of one kind return tables of the same columns: one list of
        // them for all (report::Table shares it), not one per run.
        for (const std::size_t i : unit)
            for (std::size_t t = 0; t < per_run[i].size(); ++t) {
                if (prototypes.size() <= t) prototypes.push_back(per_run[i][t]);
                per_run[i][t].share_columns_with(prototypes[t]);
            }
        if (options.on_progress) {
            done += unit.size();
            options.on_progress(done, w.wanted);
        }
    });
    return not_cached.load();
}

// The runs' tables joined as the kind joins them, and judged against the
// document's values where the runs follow its protocol.
void aggregate(const Plan& plan, PerRun& per_run, std::shared_ptr<const RunRows> rows, SweepResult& result) {
    try {
        Aggregation joining(plan, per_run, std::move(rows));
        result.tables = plan.kind->aggregate          ? plan.kind->aggregate(joining)
                        : plan.kind->seed_statistics ? std::vector{joining.summarize_seeds(*plan.kind->seed_statistics)}
                                                     : joining.concatenate_runs();
        for (report::Table& t : result.tables) joining.set_headline_summary(t);
    } catch (const Error& e) {
        throw Error(plan.source + ": " + e.what(), e.code());
    }
    // A row is judged when the runs behind it (those whose swept values
    // it shows) follow the document's protocol: in a multirun, the rows
    // under the document's settings keep their verdict.
    const auto row_follows_protocol = [&](const report::Expectation&, const report::Table& t, std::size_t row) {
        if (plan.follows_protocol()) return true;
        return std::all_of(plan.points.begin(), plan.points.end(), [&](const auto& point) {
            for (const auto& [key, value] : point->swept)
                if (t.find_column(key) && !report::cells_agree(t.at(row, key), swept_cell(plan, key, value), {}))
                    return true;  // not behind this row
            return plan.follows_protocol(*point);
        });
    };
    result.expect = report::apply_expectations(result.tables, plan.expectations, row_follows_protocol);
}

}  // namespace

SweepResult execute(const Plan& plan, const ExecuteOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    RunCounts counts;
    counts.started_utc = utc_now();
    ThreadPool pool(options.threads);
    counts.threads = pool.size();
    PerRun per_run(plan.runs.size());
    const auto rows = plan.kind->one_row_runs ? std::make_shared<RunRows>(plan) : nullptr;
    const RunCache cache(options.cache, options.cache_also);
    const Wanted w = take_cached(plan, options, cache, pool, per_run, rows.get());
    counts.not_cached = compute_missing(plan, options, cache, pool, w, per_run, rows.get());
    counts.runs = w.wanted;
    counts.reused = w.found;
    counts.rejected = cache.rejected();

    SweepResult result;
    if (!options.only) aggregate(plan, per_run, rows, result);  // a shard's runs are in the cache; merge joins them
    counts.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    result.manifest = options.only ? run_record(plan, counts) : sweep_manifest(plan, counts, result.tables);
    return result;
}

}  // namespace ffn::runner
