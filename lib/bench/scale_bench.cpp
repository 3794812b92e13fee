#include "bench/scale_bench.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fmt/format.h>

#include "core/error.h"
#include "runner/config.h"
#include "runner/estimate.h"
#include "runner/run_cache.h"
#include "runner/sweep.h"

namespace ffn::bench {

namespace {

namespace fs = std::filesystem;
using report::ColumnType;

struct Measured {
    double seconds = 0;
    double peak_mb = 0;
};

// `work` in a child process: its wall time (reported by the child through
// a pipe) and its peak resident memory.
template <class Work>
Measured in_child(Work work) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw Error("bench scale: no pipe");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw Error("bench scale: cannot fork");
    if (pid == 0) {
        ::close(pipe_fds[0]);
        double seconds = -1;
        try {
            const auto start = std::chrono::steady_clock::now();
            work();
            seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ffn-lab: bench scale: %s\n", e.what());
        }
        (void)!::write(pipe_fds[1], &seconds, sizeof seconds);
        ::_exit(seconds < 0 ? 1 : 0);
    }
    ::close(pipe_fds[1]);
    double seconds = -1;
    const bool got = ::read(pipe_fds[0], &seconds, sizeof seconds) == static_cast<ssize_t>(sizeof seconds);
    ::close(pipe_fds[0]);
    int status = 0;
    struct rusage usage {};
    ::wait4(pid, &status, 0, &usage);
    if (!got || seconds < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error("bench scale: a measurement failed");
    return {seconds, static_cast<double>(usage.ru_maxrss) / 1024.0};
}

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
        const Measured whole = in_child([&] {
            const runner::Plan plan = plan_for(runs, o.steps);
            runner::sweep(plan, {.out = out.string(), .threads = o.threads});
        });
        const Measured untrained = in_child([&] {
            const runner::Plan plan = plan_for(runs, 0);
            runner::sweep(plan, {.threads = o.threads});
        });
        const Measured dry = in_child([&] {
            const runner::Plan plan = plan_for(runs, o.steps);
            (void)runner::estimate_time(plan, o.threads);
        });
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
