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
#include "gemm/gemm.h"
#include "report/table_io.h"

namespace ffn::runner {

namespace {

// A swept key's column: real when any run's value is, so that a sweep
// written [0, 0.7] is one real column rather than an integer one that
// cannot take 0.7.
report::Column column_for(const Plan& plan, const std::string& key, const Json& value) {
    return {.name = key, .type = plan.swept_real(key) ? report::ColumnType::real : report::column_type_of(value), .precision = 6};
}

report::Cell swept_cell(const Plan& plan, const std::string& key, const Json& value) {
    if (value.is_number_integer() && plan.swept_real(key)) return value.get<double>();
    return report::cell_of(value);
}

std::string utc_now() {
    const std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

}  // namespace

std::vector<report::Table> concatenate_runs(const Plan& plan, std::vector<std::vector<report::Table>>& per_run) {
    std::vector<report::Table> out;
    for (std::size_t r = 0; r < per_run.size(); ++r) {
        const auto swept = plan.runs[r].swept();
        for (auto& t : per_run[r]) {
            report::Table* joined = nullptr;
            for (auto& candidate : out)
                if (candidate.name() == t.name()) joined = &candidate;
            if (!joined) {
                out.emplace_back(t.name());
                joined = &out.back();
                // Swept values lead, unless the run's table already shows them.
                for (const auto& [key, value] : swept)
                    if (!t.find_column(key)) joined->add_column(column_for(plan, key, value));
                for (const auto& c : t.columns()) joined->add_column(c);
                // A row per run is named by the run's swept values (report::diff
                // falls back to positions where they repeat).
                for (const auto& [key, value] : swept)
                    if (joined->find_column(key)) joined->add_key(key);
            }
            for (const auto& row : t.rows()) {
                std::vector<report::Cell> cells;
                for (const auto& [key, value] : swept)
                    if (!t.find_column(key)) cells.push_back(swept_cell(plan, key, value));
                cells.insert(cells.end(), row.begin(), row.end());
                joined->add_row(std::move(cells));
            }
        }
    }
    return out;
}

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

void add_swept_columns(const Plan& plan, report::Table& table) {
    if (plan.runs.empty()) return;
    for (const auto& [key, value] : plan.runs.front().point->swept) {
        table.add_column(column_for(plan, key, value));
        table.add_key(key);
    }
}

std::vector<report::Cell> swept_cells(const Plan& plan, std::size_t run) {
    std::vector<report::Cell> cells;
    for (const auto& [key, value] : plan.runs.at(run).point->swept) cells.push_back(swept_cell(plan, key, value));
    return cells;
}

std::string settings_key(const Plan& plan, std::size_t run, const std::vector<std::string>& without, bool resolved) {
    const Run& r = plan.runs.at(run);
    const auto left_out = [&](const std::string& key) {
        return key == "seed" || std::find(without.begin(), without.end(), key) != without.end();
    };
    std::string key;
    if (resolved) {
        for (const auto& item : r.point->values.items())
            if (!left_out(item.key())) key += item.key() + "=" + item.value().dump() + "\n";
    } else {
        for (const auto& [name, value] : r.point->swept)
            if (!left_out(name)) key += name + "=" + value.dump() + "\n";
    }
    return key;
}

void set_summary_after_swept(const Plan& plan, report::Table& table,
                             const std::vector<std::pair<std::string, std::string>>& rest) {
    std::vector<std::pair<std::string, std::string>> columns;
    if (!plan.runs.empty())
        for (const auto& [key, value] : plan.runs.front().point->swept) columns.emplace_back(key, "");
    columns.insert(columns.end(), rest.begin(), rest.end());
    table.set_summary(columns);
}

namespace {

std::string statistic_name(Statistic s) {
    switch (s) {
        case Statistic::mean: return "mean";
        case Statistic::sd: return "sd";
        case Statistic::median: return "median";
        case Statistic::min: return "min";
        case Statistic::max: return "max";
    }
    return "?";
}

report::Cell statistic(Statistic s, const std::vector<double>& v) {
    if (v.empty()) return {};
    switch (s) {
        case Statistic::mean: return mean(v);
        case Statistic::sd: return sample_sd(v);
        case Statistic::median: return median(v);
        case Statistic::min: return *std::min_element(v.begin(), v.end());
        case Statistic::max: return *std::max_element(v.begin(), v.end());
    }
    return {};
}

}  // namespace

report::Table summarize_seeds(const Plan& plan, const std::vector<std::vector<report::Table>>& per_run,
                              const SeedStatistics& spec) {
    report::Table t(spec.table);
    add_swept_columns(plan, t);
    std::vector<std::string> shown;
    for (const auto& k : spec.keys)
        if (!t.find_column(k)) {
            t.add_column(column_for(plan, k, plan.runs.front().raw(k)));
            shown.push_back(k);
        }
    t.add_column("seeds", report::ColumnType::integer);
    for (const auto& c : spec.columns)
        for (const Statistic s : c.statistics)
            t.add_column(c.as + "_" + statistic_name(s), report::ColumnType::real, spec.precision);
    for (const auto& group : seed_groups(plan)) {
        auto cells = swept_cells(plan, group.front());
        for (const auto& k : shown) cells.push_back(report::cell_of(plan.runs[group.front()].raw(k)));
        cells.push_back(static_cast<std::int64_t>(group.size()));
        for (const auto& c : spec.columns) {
            std::vector<double> values;
            for (const std::size_t i : group)
                if (!per_run[i].empty() && per_run[i].front().row_count() > 0)
                    if (const auto x = report::as_number(per_run[i].front().at(0, c.column))) values.push_back(*x);
            for (const Statistic s : c.statistics) cells.push_back(statistic(s, values));
        }
        t.add_row(std::move(cells));
    }
    return t;
}

report::Table per_run_rows(const Plan& plan, const std::vector<std::vector<report::Table>>& per_run) {
    report::Table runs("runs");
    runs.set_long_form();
    add_swept_columns(plan, runs);
    runs.add_column("seed", report::ColumnType::integer);
    runs.add_key("seed");
    runs.add_column("run_id", report::ColumnType::text);
    for (auto c : per_run.front().front().columns()) {
        // A run's own column named like a swept key (a kind's "steps" when
        // steps are swept) keeps both: the run's gets a suffix.
        if (runs.find_column(c.name)) c.name += "_run";
        runs.add_column(c);
    }
    for (std::size_t i = 0; i < per_run.size(); ++i) {
        auto cells = swept_cells(plan, i);
        cells.push_back(static_cast<std::int64_t>(plan.runs[i].seed));
        cells.push_back(plan.runs[i].id_hex());
        const auto& row = per_run[i].front().rows().front();
        cells.insert(cells.end(), row.begin(), row.end());
        runs.add_row(std::move(cells));
    }
    return runs;
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
        result.tables = plan.kind->aggregate          ? plan.kind->aggregate(plan, per_run)
                        : plan.kind->seed_statistics ? std::vector{summarize_seeds(plan, per_run, *plan.kind->seed_statistics)}
                                                     : concatenate_runs(plan, per_run);
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
    return result;
}

}  // namespace ffn::runner
