#include "bench/estimate_bench.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>

#include "runner/estimate.h"
#include "runner/execute.h"

namespace ffn::bench {

namespace fs = std::filesystem;

report::Table bench_estimate(const EstimateBenchOptions& o, const std::vector<runner::ExperimentKind>& kinds) {
    // A store of the benchmark's own, so that the user's speeds neither
    // help nor change.
    const fs::path store = fs::temp_directory_path() / ("ffnlab_bench_estimate_" + std::to_string(::getpid()) + ".json");
    const std::string before = std::getenv("FFNLAB_SPEEDS") ? std::getenv("FFNLAB_SPEEDS") : "";
    ::setenv("FFNLAB_SPEEDS", store.c_str(), 1);
    std::error_code ec;
    fs::remove(store, ec);

    report::Table t("estimate");
    using report::ColumnType;
    t.add_column("config", ColumnType::text)
        .add_column("experiment", ColumnType::text)
        .add_column("runs", ColumnType::integer)
        .add_column("estimate_s", ColumnType::real, 3)
        .add_column("from", ColumnType::text)
        .add_column("dry_run_s", ColumnType::real, 3, true)
        .add_column("wall_s", ColumnType::real, 3, true)
        .add_column("wall_over_estimate", ColumnType::real, 3, true);
    const auto seconds_since = [](auto start) { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    for (const std::string& config : o.configs) {
        const runner::Plan plan = runner::make_plan(runner::load_config(config, o.bundled), config, {}, kinds);
        auto start = std::chrono::steady_clock::now();
        const std::string line = runner::estimate_time(plan, o.threads);
        const double dry = seconds_since(start);
        start = std::chrono::steady_clock::now();
        runner::SweepResult result = runner::execute(plan, {.threads = o.threads});
        const double wall = seconds_since(start);
        runner::record_speed(plan, result.manifest);
        // "about 2.1 s on 2 threads (...)": the number after "about".
        report::Cell estimate{};
        const std::size_t at = line.find("about ");
        if (at != std::string::npos) estimate = std::strtod(line.c_str() + at + 6, nullptr);
        const std::string from = line.find("probes of") != std::string::npos ? "probes"
                                 : line.find("a sweep of") != std::string::npos ? "a past sweep"
                                                                                : "none";
        const auto* e = std::get_if<double>(&estimate);
        t.add_row({config, plan.kind->name, static_cast<std::int64_t>(plan.runs.size()), estimate, from, dry, wall,
                   e && *e > 0 ? report::Cell(wall / *e) : report::Cell{}});
    }
    fs::remove(store, ec);
    if (before.empty()) ::unsetenv("FFNLAB_SPEEDS");
    else ::setenv("FFNLAB_SPEEDS", before.c_str(), 1);
    return t;
}

}  // namespace ffn::bench
