#include "runner/estimate.h"

#include <algorithm>
#include <chrono>
#include <fmt/format.h>

#include "runner/execute.h"

namespace ffn::runner {

// A training sweep's time from a measured cost per step: a sample of the
// plan's work units (evenly spread, so every grid point's sizes are in it) run
// for s and 2s steps (probes, nothing kept), s doubled until the longer
// probe takes a quarter second, which gives a cost per step and what every
// run costs besides its steps (set-up, evaluation), scaled to the config's
// steps and to all its runs. The sample and the quarter second bound what
// the estimate costs, however many runs the sweep has.
std::string estimate_time(const Plan& plan, std::size_t threads) {
    constexpr std::size_t kSampleUnits = 8;
    constexpr double kProbeSeconds = 0.25;
    if (!plan.kind->schema.find("steps"))
        return "estimated time: not measured (experiment '" + plan.kind->name + "' trains nothing; its runs take seconds)";
    if (std::find(plan.swept_keys.begin(), plan.swept_keys.end(), "steps") != plan.swept_keys.end())
        return "estimated time: not measured ('steps' is swept; the probes scale one number of steps)";
    const long steps = plan.runs.front().integer("steps");
    // Whole work units, so that runs batched together are timed batched.
    const auto units = work_units(plan, std::vector<bool>(plan.runs.size(), true));
    std::vector<std::size_t> sample;
    for (std::size_t u = 0; u < std::min(units.size(), kSampleUnits); ++u)
        for (const std::size_t i : units[u * units.size() / std::min(units.size(), kSampleUnits)]) sample.push_back(i);
    const std::size_t n = plan.runs.size(), sampled = sample.size();
    const auto seconds_for = [&](long probe_steps) {
        // The sampled runs alone, with fewer steps: nothing of the probe
        // grows with the plan.
        Plan probe;
        probe.kind = plan.kind;
        probe.source = plan.source;
        probe.seeds = plan.seeds;
        std::vector<std::size_t> all;
        for (const std::size_t i : sample) {
            Run run = plan.runs[i];
            // The run's point with fewer steps, one per sampled point.
            if (probe.points.empty() || probe.points.back()->values != plan.runs[i].point->values) {
                auto point = std::make_shared<GridPoint>(*plan.runs[i].point);
                point->values["steps"] = probe_steps;
                point->index = probe.points.size();
                set_id_parts(*point, plan.kind->name);
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
    long s = std::max(1L, std::min(steps / 2, 10L));
    double t1 = seconds_for(s), t2 = seconds_for(2 * s);
    while (t2 < kProbeSeconds && 4 * s <= steps) {
        s *= 2;
        t1 = t2;
        t2 = seconds_for(2 * s);
    }
    const double scale = static_cast<double>(n) / static_cast<double>(sampled);
    const double per_step = std::max(0.0, (t2 - t1) / static_cast<double>(s)) * scale;
    const double fixed = std::max(0.0, t1 * scale - per_step * static_cast<double>(s));
    return fmt::format("estimated time: about {:.1f} s ({:.3g} ms a step for all {} runs, and {:.2f} s besides the "
                       "steps, from probes of {} and {} steps on {} of the runs)",
                       fixed + per_step * static_cast<double>(steps), per_step * 1e3, n, fixed, s, 2 * s, sampled);
}

}  // namespace ffn::runner
