#include "runner/estimate.h"

#include "io/bundle.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/hash.h"
#include "core/isa.h"
#include "core/thread_pool.h"
#include "ffnlab/build_info.h"
#include "io/atomic_file.h"
#include "io/bundle.h"
#include "report/text.h"
#include "runner/execute.h"

namespace ffn::runner {

namespace fs = std::filesystem;

namespace {

double run_cost(const Plan& plan, const Run& run) { return plan.kind->cost ? plan.kind->cost(run) : 1.0; }

// Calls f(begin, end) for each grid point's runs [begin, end): a run's
// cost and speed class depend on its point, not its seed, and a point's
// runs are consecutive, so a million-run plan is asked once per point.
template <class F>
void for_each_point(const Plan& plan, F&& f) {
    for (std::size_t begin = 0, end = 0; begin < plan.runs.size(); begin = end) {
        end = begin + 1;
        while (end < plan.runs.size() && plan.runs[end].point == plan.runs[begin].point) ++end;
        f(begin, end);
    }
}

// Every run's cost, summed, but for the runs flagged in `skip`; a point's
// runs are counted up to the kind's cost_lanes, but for the part each run
// pays alone.
double plan_cost(const Plan& plan, const std::vector<bool>& skip = {}) {
    const std::size_t lanes = plan.kind->cost_lanes ? std::max<std::size_t>(1, plan.kind->cost_lanes()) : 1;
    double total = 0;
    for_each_point(plan, [&](std::size_t begin, std::size_t end) {
        std::size_t runs = 0;
        for (std::size_t i = begin; i < end; ++i) runs += skip.empty() || !skip[i] ? 1 : 0;
        const Run& run = plan.runs[begin];
        const double alone = plan.kind->cost_alone ? plan.kind->cost_alone(run) : 0.0;
        total += (run_cost(plan, run) - alone) * static_cast<double>((runs + lanes - 1) / lanes * lanes) +
                 alone * static_cast<double>(runs);
    });
    return total;
}

// The kind, its speed classes in this plan, the config's name (two configs
// of one kind can differ tenfold in speed a unit of cost: activations.json's
// thousands of small nets against width.json's), the kernel family, the
// threads, the version and the build type.
std::string speed_key(const Plan& plan, std::size_t threads) {
    std::set<std::string> classes;
    if (plan.kind->speed_class)
        for_each_point(plan, [&](std::size_t begin, std::size_t) { classes.insert(plan.kind->speed_class(plan.runs[begin])); });
    std::string kind = plan.kind->name;
    if (!classes.empty()) {
        const std::string joined = fmt::format("{}", fmt::join(classes, "; "));
        constexpr std::size_t kMost = 120;  // a plan sweeping the shape names its mix by a hash
        kind += " (" + (joined.size() <= kMost ? joined : fmt::format("{} classes {:016x}", classes.size(), fnv1a64(joined))) + ")";
    }
    // The build type too: a sanitized build runs several times slower.
    return fmt::format("{} config={} {} threads={} ffn-lab={} {}", kind, io::bundle::config_name(plan.source), isa_name(active_isa()),
                       threads, build::version, build::build_type);
}

Json read_speeds() {
    if (speeds_file().empty()) return Json::object();
    try {
        Json doc = load_json_file(speeds_file());
        if (doc.is_object()) return doc;
    } catch (const Error&) {
    }
    return Json::object();
}

void store_speed(const std::string& key, double seconds_per_cost, const std::string& from) {
    if (speeds_file().empty()) return;
    try {
        Json doc = read_speeds();
        doc[key] = {{"seconds_per_cost", seconds_per_cost}, {"from", from}};
        const fs::path file = speeds_file();
        std::error_code ec;
        fs::create_directories(file.parent_path(), ec);
        io::write_file_atomically(file.string(), doc.dump(2) + "\n");
    } catch (const std::exception&) {
        // An estimate is advice: a cache that cannot be written costs the
        // next estimate a probe, nothing else.
    }
}

// The first calibration of a kind on this machine: a sample of the plan's
// work units (evenly spread, so every grid point's sizes are in it) run
// for s and 4s steps (probes, nothing kept), s raised until the
// difference is a quarter second and half the shorter probe, or the probes
// have taken five seconds. Returns
// seconds per unit of cost, from the difference of the two probes scaled to
// the config's steps (what a run costs besides its steps is in the
// estimate's per-run share).
double probe_speed(const Plan& plan, std::size_t threads) {
    constexpr std::size_t kSampleUnits = 8;
    constexpr double kProbeSeconds = 0.25;
    const bool trains = plan.kind->schema.find("steps") != nullptr;
    const auto units = work_units(plan, std::vector<bool>(plan.runs.size(), true));
    std::vector<std::size_t> sample;
    for (std::size_t u = 0; u < std::min(units.size(), kSampleUnits); ++u)
        for (const std::size_t i : units[u * units.size() / std::min(units.size(), kSampleUnits)]) sample.push_back(i);
    double sample_cost = 0;
    for (const std::size_t i : sample) sample_cost += run_cost(plan, plan.runs[i]);
    const auto seconds_for = [&](std::optional<long> probe_steps) {
        Plan probe;
        probe.kind = plan.kind;
        probe.source = plan.source;
        probe.seeds = plan.seeds;
        std::vector<std::size_t> all;
        // One probe point per point of the plan, so that the runs a work
        // unit batches together are batched in the probe too.
        const GridPoint* last = nullptr;
        for (const std::size_t i : sample) {
            Run run = plan.runs[i];
            if (plan.runs[i].point.get() != last) {
                last = plan.runs[i].point.get();
                auto point = std::make_shared<GridPoint>(*plan.runs[i].point);
                if (probe_steps) point->values["steps"] = *probe_steps;
                point->index = probe.points.size();
                set_id_parts(*point, plan.kind->name, plan.kind->schema);
                probe.points.push_back(point);
            }
            run.point = probe.points.back();
            run.id = run_id(*run.point, run.seed);
            run.index = probe.runs.size();
            all.push_back(run.index);
            probe.runs.push_back(std::move(run));
        }
        const auto start = std::chrono::steady_clock::now();
        execute(probe, {.threads = threads, .only = all});
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    };
    // A kind that trains nothing: the sample's runs as they are.
    if (!trains) return seconds_for(std::nullopt) / sample_cost;
    const long steps = plan.runs.front().integer("steps");
    // No steps to scale: the runs as they are (their evaluation alone).
    if (steps == 0) return seconds_for(0L) / sample_cost;
    // The steps' share is the difference of two probes, s and 4s steps: it
    // must stand well clear of the fixed part (a held-out evaluation can
    // take seconds) and of the noise, or the fixed part passes for all.
    // Probes stop at a few seconds in all, whatever the difference is by then.
    constexpr long kFactor = 4;
    constexpr double kProbeBudgetSeconds = 5;
    long s = std::max(1L, std::min(steps / kFactor, 10L));
    long s2 = std::min(kFactor * s, steps);
    double t1 = seconds_for(s), t2 = s2 > s ? seconds_for(s2) : t1, spent = t1 + t2;
    while ((t2 - t1 < kProbeSeconds || t2 - t1 < t1 / 2) && kFactor * kFactor * s <= steps && spent < kProbeBudgetSeconds) {
        s *= kFactor;
        s2 = kFactor * s;
        t1 = t2;
        t2 = seconds_for(s2);
        spent += t2;
    }
    const double per_step = s2 > s ? std::max(0.0, (t2 - t1) / static_cast<double>(s2 - s)) : t1 / static_cast<double>(s);
    const double fixed = s2 > s ? std::max(0.0, t1 - per_step * static_cast<double>(s)) : 0.0;
    return (fixed + per_step * static_cast<double>(steps)) / sample_cost;
}

bool steps_swept(const Plan& plan) {
    return std::find(plan.swept_keys.begin(), plan.swept_keys.end(), "steps") != plan.swept_keys.end();
}

}  // namespace

std::string speeds_file() {
    if (const char* f = std::getenv("FFNLAB_SPEEDS"); f && *f) return f;
    if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return (fs::path(x) / "ffn-lab" / "speeds.json").string();
    // No HOME: no store, rather than one in a shared folder that another
    // user could fill.
    const char* home = std::getenv("HOME");
    return home && *home ? (fs::path(home) / ".cache" / "ffn-lab" / "speeds.json").string() : std::string();
}

std::string estimate_time(const Plan& plan, std::size_t threads, const std::vector<bool>& cached, bool keep_probed) {
    threads = threads ? threads : ThreadPool::hardware_threads();
    const std::size_t cached_runs = static_cast<std::size_t>(std::count(cached.begin(), cached.end(), true));
    const std::size_t to_run = plan.runs.size() - cached_runs;
    if (to_run == 0)
        return plan.runs.size() == 1 ? std::string("estimated time: none; the cache holds the one run")
                                     : fmt::format("estimated time: none; the cache holds all {} runs", plan.runs.size());
    const double cost = plan_cost(plan, cached);
    // A speed is seconds per unit of cost: runs that cost nothing by the
    // kind's measure (no steps, where it counts steps alone) have no time
    // to scale, and 0/0 would print as nan.
    if (!(cost > 0))
        return fmt::format("estimated time: not known ({} cost nothing by the measure of experiment '{}', which counts the work "
                           "it trains)",
                           to_run == 1 ? std::string("the run") : fmt::format("the {} runs", to_run), plan.kind->name);
    const std::string key = speed_key(plan, threads);
    const Json speeds = read_speeds();
    std::string from;
    double seconds_per_cost = 0;
    // A speed that is not a positive number, or one that makes this plan's
    // time no number (an edited or damaged store), is no speed: the kind is
    // calibrated again.
    const auto stored = [&]() -> bool {
        if (!speeds.contains(key) || !speeds[key].is_object() || !speeds[key].value("seconds_per_cost", Json()).is_number()) return false;
        const double v = speeds[key]["seconds_per_cost"].get<double>();
        return std::isfinite(v) && v > 0 && std::isfinite(v * cost);
    };
    if (stored()) {
        seconds_per_cost = speeds[key]["seconds_per_cost"].get<double>();
        // The file's own words, shown without its control characters.
        from = report::printable(speeds[key].value("from", Json("")).is_string() ? speeds[key].value("from", "") : "");
    } else {
        if (plan.kind->schema.find("steps") != nullptr && steps_swept(plan))
            return fmt::format("estimated time: not known yet (no sweep of {} has run here on {}; 'steps' is swept, which the "
                               "probes cannot scale); the first one that runs for a second teaches the estimate",
                               plan.source, report::counted(threads, "thread"));
        seconds_per_cost = probe_speed(plan, threads);
        from = fmt::format("probes of {} on this machine", plan.source);
        if (keep_probed) store_speed(key, seconds_per_cost, from);
        else from += ", just now";
    }
    return fmt::format("estimated time: about {:.2g} s on {} ({:.3g} units of cost for {}{}, at the speed of {}; {} {})",
                       seconds_per_cost * cost, report::counted(threads, "thread"), cost, report::counted(to_run, "run"),
                       cached_runs ? fmt::format(" not in the cache, which holds {} more", cached_runs) : "", from,
                       speeds_file().empty() ? "not kept:" : stored() || keep_probed ? "kept in"
                                                             : "not kept, as a dry run writes nothing; a sweep that runs for a second keeps its speed in",
                       speeds_file().empty() ? std::string("no HOME or XDG_CACHE_HOME to keep it in") : report::printable(speeds_file()));
}

void record_speed(const Plan& plan, const Json& manifest) {
    constexpr double kTeachingSeconds = 1.0;
    const double wall = manifest.value("wall_seconds", 0.0);
    const auto threads = manifest.value("threads", std::size_t{0});
    if (wall < kTeachingSeconds || threads == 0 || manifest.value("runs_computed", std::size_t{0}) != plan.runs.size()) return;
    const double cost = plan_cost(plan);
    if (!(cost > 0)) return;
    store_speed(speed_key(plan, threads), wall / cost,
                fmt::format("a sweep of {} ({} in {:.2f} s)", plan.source, report::counted(plan.runs.size(), "run"), wall));
}

}  // namespace ffn::runner
