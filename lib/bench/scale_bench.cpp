#include "bench/scale_bench.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

#include "bench/timing.h"
#include "core/error.h"
#include "runner/config.h"
#include "runner/estimate.h"
#include "runner/run_cache.h"
#include "runner/sweep.h"

namespace ffn::bench {

namespace {

namespace fs = std::filesystem;
using report::ColumnType;

std::uintmax_t folder_bytes(const fs::path& dir, std::size_t* files) {
    std::uintmax_t total = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir, ec))
        if (e.is_regular_file()) {
            total += e.file_size();
            ++*files;
        }
    return total;
}

}  // namespace

report::Table bench_scale(const ScaleBenchOptions& o, const std::vector<runner::ExperimentKind>& kinds) {
    const fs::path scratch = o.folder.empty() ? fs::temp_directory_path() / fmt::format("ffnlab-bench-scale-{}", ::getpid()) : fs::path(o.folder);
    report::Table t("scale");
    t.add_column("runs", ColumnType::integer)
        .add_column("wall_s", ColumnType::real, 4, true)
        .add_column("peak_mb", ColumnType::real, 4, true)
        .add_column("us_per_run", ColumnType::real, 4, true)
        .add_column("untrained_wall_s", ColumnType::real, 4, true)
        .add_column("overhead_us_per_run", ColumnType::real, 4, true)
        .add_column("dry_run_s", ColumnType::real, 4, true)
        .add_column("dry_run_peak_mb", ColumnType::real, 4, true)
        .add_column("plan_bytes_per_run", ColumnType::real, 4, true)
        .add_column("cache_files", ColumnType::integer)
        .add_column("cache_bytes_per_run", ColumnType::real, 4, true);
    const auto plan_for = [&](std::size_t runs, long steps) {
        const runner::Json config = runner::load_config(o.config);
        std::vector<runner::Override> sets = {runner::parse_override("steps=" + std::to_string(steps))};
        // Grid points times seeds: the seeds widened to make `runs`.
        runner::Plan probe = runner::make_plan(config, o.config, sets, kinds);
        const std::size_t points = std::max<std::size_t>(1, probe.points.size());
        sets.push_back(runner::parse_override(fmt::format("seeds=0:{}", std::max<std::size_t>(1, runs / points))));
        return runner::make_plan(config, o.config, sets, kinds);
    };
    for (const std::size_t runs : o.runs) {
        const fs::path out = scratch / fmt::format("runs-{}", runs);
        std::error_code ec;
        fs::remove_all(out, ec);
        const Measured whole = measure_in_child([&] {
            const runner::Plan plan = plan_for(runs, o.steps);
            runner::sweep(plan, {.out = out.string(), .threads = o.threads});
        }, "bench scale");
        const Measured untrained = measure_in_child([&] {
            const runner::Plan plan = plan_for(runs, 0);
            runner::sweep(plan, {.threads = o.threads});
        }, "bench scale");
        const Measured dry = measure_in_child([&] {
            const runner::Plan plan = plan_for(runs, o.steps);
            (void)runner::estimate_time(plan, o.threads);
        }, "bench scale");
        std::size_t files = 0;
        const std::uintmax_t bytes = folder_bytes(out / "runs", &files);
        const double n = static_cast<double>(plan_for(runs, o.steps).runs.size());
        t.add_row({static_cast<std::int64_t>(n), whole.seconds, whole.peak_mb, whole.seconds / n * 1e6, untrained.seconds,
                   untrained.seconds / n * 1e6, dry.seconds, dry.peak_mb, dry.peak_mb * 1048576.0 / n,
                   static_cast<std::int64_t>(files), static_cast<double>(bytes) / n});
        fs::remove_all(out, ec);
    }
    if (o.folder.empty()) {
        std::error_code ec;
        fs::remove_all(scratch, ec);
    }
    return t;
}

}  // namespace ffn::bench
