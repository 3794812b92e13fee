#include "bench/sweep_bench.h"

#include <map>

#include "bench/timing.h"
#include "bench/torch_reference.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "gemm/gemm.h"
#include "runner/execute.h"

namespace ffn::bench {

namespace {

using report::ColumnType;

// Runs the config `repeats` times per thread count; a step is one optimizer
// update of one run, so steps = runs x the config's 'steps'.
// PyTorch's mean time per step over the config's runs, from the same nets
// timed one width and activation at a time (width_sweep configs only).
std::string torch_sweep_reference(const runner::Plan& plan, const SweepBenchOptions& o, double* us_per_step) {
    if (!plan.kind->torch_nets) return "not measured (no PyTorch reference for " + plan.kind->name + ")";
    const runner::TorchNets nets = plan.kind->torch_nets(plan);
    if (!nets.unavailable.empty()) return "not measured (" + nets.unavailable + ")";
    std::vector<std::string> args = {"sweep", "300", "3", std::to_string(nets.samples)};
    for (const auto& [net, n] : nets.steps) args.push_back(net.first + ":" + std::to_string(net.second));
    TorchSession torch(o.python, args, 1);
    const std::vector<io::Json> records = torch.all_records();
    if (records.empty()) return torch.about();  // not run, or failed: it says why
    double total_us = 0, total_steps = 0;
    for (const auto& [net, n] : nets.steps) {
        double us = -1;
        for (const auto& r : records)
            if (text_field(r, "activation") == net.first && number_field(r, "width") == static_cast<double>(net.second))
                us = number_field(r, "us_per_step");
        if (us <= 0)  // a net it did not time: no figure rather than a mean of some
            return torch.about() + " (no time for " + net.first + ":" + std::to_string(net.second) + ")";
        total_us += n * us;
        total_steps += n;
    }
    if (total_steps > 0) *us_per_step = total_us / total_steps;
    return torch.about();
}

}  // namespace

report::Table bench_sweep(const runner::Plan& plan, const SweepBenchOptions& o, std::string* torch_about) {
    double steps = 0;
    for (const auto& run : plan.runs) {
        if (!run.point->values.contains("steps")) throw Error(o.config + ": experiment '" + plan.kind->name + "' has no 'steps' to time");
        steps += static_cast<double>(run.integer("steps"));
    }
    report::Table t("sweep");
    t.add_column("config", report::ColumnType::text)
        .add_column("runs", report::ColumnType::integer)
        .add_column("steps", report::ColumnType::integer)
        .add_column("threads", report::ColumnType::integer)
        .add_column("isa", report::ColumnType::text)
        .add_column("wall_s", report::ColumnType::real, 4, true)
        .add_column("us_per_step_per_core", report::ColumnType::real, 4, true)
        .add_column("steps_per_s", report::ColumnType::real, 4, true)
        .add_column("gflops", report::ColumnType::real, 4, true)
        .add_column("peak_gflops", report::ColumnType::real, 4, true)
        .add_column("peak_share", report::ColumnType::real, 3, true)
        .add_column("torch_us_per_step", report::ColumnType::real, 4, true)
        .add_column("vs_torch", report::ColumnType::real, 4, true);  // PyTorch's time per step over ours per core
    double torch_us = 0;
    *torch_about = torch_sweep_reference(plan, o, &torch_us);
    // The kind's counted operations, when it counts them, against the FMA
    // peak of the same threads measured just before (float32 or float64 as
    // the runs train).
    double flops = 0;
    bool float64 = false;
    for (const auto& run : plan.runs) {
        if (plan.kind->flops) flops += plan.kind->flops(run);
        float64 = float64 || run.is_float64();
    }
    std::vector<std::size_t> threads = o.threads;
    if (threads.empty()) {  // one thread and every core
        threads = {1};
        if (ThreadPool::hardware_threads() > 1) threads.push_back(ThreadPool::hardware_threads());
    }
    for (std::size_t n : threads) {
        const double peak = gemm::measure_fma_peak_gflops(std::nullopt, n) * (float64 ? 0.5 : 1.0);
        const double wall = median_seconds_per_call([&] { runner::execute(plan, {n, {}, {}}); }, o.repeats, 0.0);
        const report::Cell achieved = plan.kind->flops ? report::Cell{flops / wall * 1e-9} : report::Cell{};
        const report::Cell share = plan.kind->flops ? report::Cell{flops / wall * 1e-9 / peak} : report::Cell{};
        const double us_per_step_per_core = wall * double(n) / steps * 1e6;
        t.add_row({o.config, static_cast<std::int64_t>(plan.runs.size()), static_cast<std::int64_t>(steps),
                   static_cast<std::int64_t>(n), std::string(isa_name(active_isa())), wall, us_per_step_per_core,
                   steps / wall, achieved, peak, share, torch_us > 0 ? report::Cell{torch_us} : report::Cell{},
                   torch_us > 0 ? report::Cell{torch_us / us_per_step_per_core} : report::Cell{}});
    }
    return t;
}

}  // namespace ffn::bench
