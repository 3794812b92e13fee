#include "runner/execute.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <fmt/format.h>
#include <mutex>
#include <numeric>
#include <string>
#include <unordered_map>

#include <fmt/ranges.h>

#include "core/error.h"
#include "core/stats.h"
#include "core/thread_pool.h"
#include "runner/run_cache.h"
#include "ffnlab/build_info.h"
#include "core/isa.h"
#include "report/table_io.h"

namespace ffn::runner {

namespace {

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

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

SweepResult execute(const Plan& plan, const ExecuteOptions& options) {
    const auto start = std::chrono::steady_clock::now();
    const std::string started = utc_now();
    ThreadPool pool(options.threads);
    std::vector<std::vector<report::Table>> per_run(plan.runs.size());
    const RunCache cache(options.cache, options.cache_also);
    // reused: taken from the cache; also true for runs outside `only`,
    // which this call neither computes nor reports.
    std::vector<bool> reused(plan.runs.size(), false), wanted(plan.runs.size(), !options.only);
    if (options.only)
        for (const std::size_t i : *options.only) wanted.at(i) = true;
    if (!options.fresh && options.artifacts.empty() && cache.enabled()) {
        // Read and authenticate the entries on the pool: a million of them
        // are a million small reads.
        constexpr std::size_t kChunk = 256;
        std::vector<char> found(plan.runs.size(), 0);
        pool.parallel_for((plan.runs.size() + kChunk - 1) / kChunk, [&](std::size_t c) {
            for (std::size_t i = c * kChunk; i < std::min(plan.runs.size(), (c + 1) * kChunk); ++i)
                if (wanted[i])
                    if (auto tables = cache.load(plan.kind->name, plan.runs[i])) {
                        per_run[i] = std::move(*tables);
                        found[i] = 1;
                    }
        });
        for (std::size_t i = 0; i < plan.runs.size(); ++i) reused[i] = found[i] != 0;
    }
    std::size_t reused_count = 0, wanted_count = 0;
    for (std::size_t i = 0; i < plan.runs.size(); ++i) {
        reused_count += wanted[i] && reused[i] ? 1 : 0;
        wanted_count += wanted[i] ? 1 : 0;
        if (!wanted[i]) reused[i] = true;  // not this call's: skipped below
    }
    if (options.cached_only && reused_count < wanted_count) {
        std::vector<std::string> missing;
        for (std::size_t i = 0; i < plan.runs.size() && missing.size() < 3; ++i)
            if (!reused[i]) missing.push_back("run " + std::to_string(i + 1) + " (" + plan.runs[i].label() + ", id " + plan.runs[i].id_hex() + ")");
        const std::string forged =
            cache.rejected() ? fmt::format(" ({} found but failing authentication: written under another key, or edited)", cache.rejected())
                             : "";
        throw Error(fmt::format("{}: {} of {} runs are in none of the shards{}, e.g. {}", plan.source, wanted_count - reused_count,
                                wanted_count, forged, fmt::join(missing, "; ")));
    }
    std::mutex progress_mutex;
    std::vector<report::Table> prototypes;  // the first run's tables (under progress_mutex)
    std::size_t done = reused_count;
    const std::size_t total = wanted_count;
    std::atomic<std::size_t> not_cached{0};
    std::vector<bool> to_compute(plan.runs.size());
    for (std::size_t i = 0; i < plan.runs.size(); ++i) to_compute[i] = !reused[i];
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
            if (plan.kind->run_batch) {
                auto tables = plan.kind->run_batch(runs);
                for (std::size_t k = 0; k < unit.size(); ++k) per_run[unit[k]] = std::move(tables[k]);
            } else {
                per_run[unit.front()] = plan.kind->run(runs.front());
            }
            for (std::size_t k = 0; k < unit.size(); ++k)
                if (cache.enabled() && !cache.store(keys[k], plan.kind->name, plan.runs[unit[k]], per_run[unit[k]])) ++not_cached;
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
            options.on_progress(done, total);
        }
    });

    SweepResult result;
    if (options.only) {  // a shard: its runs are in the cache, the join waits for merge
        Json& m = result.manifest;
        m["experiment"] = plan.kind->name;
        m["runs"] = wanted_count;
        m["runs_computed"] = wanted_count - reused_count;
        m["runs_reused"] = reused_count;
        m["runs_rejected"] = cache.rejected();
        m["runs_not_cached"] = not_cached.load();
        m["wall_seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return result;
    }
    try {
        Aggregation joining(plan, per_run);
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

    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    Json& m = result.manifest;
    m["experiment"] = plan.kind->name;
    m["config_file"] = plan.source;
    m["config"] = plan.config;
    m["overrides"] = plan.overrides;
    m["ffn_lab_version"] = build::version;
    m["git_commit"] = std::string(build::git_commit).empty() ? Json(nullptr) : Json(build::git_commit);
    m["build_type"] = build::build_type;
    m["gemm_isa"] = isa_name(active_isa());
    m["threads"] = pool.size();
    m["seeds"] = plan.seeds;
    m["runs"] = plan.runs.size();
    m["runs_computed"] = plan.runs.size() - reused_count;
    m["runs_reused"] = reused_count;  // from the run cache (runner/run_cache.h)
    m["runs_rejected"] = cache.rejected();  // entries found but not authentic: computed again
    m["runs_not_cached"] = not_cached.load();
    // Every point's resolved values (defaults filled in, sweep applied) and
    // the seeds: each run is a point and a seed (run ids hash the two), so
    // a single run can be reproduced from the manifest alone, which stays
    // as small as the grid however many seeds it has.
    Json points = Json::array();
    for (const auto& p : plan.points) points.push_back(p->values);
    m["resolved_points"] = points;
    m["seeds"] = plan.seeds;
    m["started_utc"] = started;
    m["wall_seconds"] = wall;
    // What `ffn-lab results` lists for the folder, without reading its tables.
    const auto verdicts = report::count_verdicts(result.tables);
    m["verdicts"] = {{"pass", verdicts.pass}, {"miss", verdicts.miss}, {"n/a", verdicts.not_applicable}};
    return result;
}

}  // namespace ffn::runner
