#include "cmd_bench.h"

#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <map>

#include "bench/openblas.h"
#include "bench/timing.h"
#include "common.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "experiments/registry.h"
#include "runner/execute.h"
#include "gemm/gemm.h"
#include "report/table_io.h"

namespace ffn::app {

CLI::App* setup_bench(CLI::App& app, BenchOptions& o) {
    auto* cmd = app.add_subcommand("bench", "Benchmarks (medians over repeated runs, with same-run references)");
    cmd->require_subcommand(1);

    auto* g = o.gemm_cmd = cmd->add_subcommand("gemm", "GFLOP/s of the gemm core vs the FMA peak and OpenBLAS");
    g->add_option("--shape", o.gemm.shapes, "MxKxN or MxKxN:t (A stored transposed); repeatable (default: the FFN list)");
    g->add_option("--dtype", o.gemm.dtypes, "float32 and/or float64")->check(CLI::IsMember({"float32", "float64"}));
    g->add_option("--threads", o.gemm.threads, "Thread counts to measure")->check(CLI::Range(1, 1024));
    g->add_option("--isa", o.gemm.isas, "Kernel families (default: every SIMD family the machine has)")
        ->check(CLI::IsMember({"ref", "avx2", "avx512"}));
    g->add_option("--repeats", o.gemm.repeats, "Timed batches per measurement (the median is reported)")
        ->check(CLI::Range(1, 101));
    g->add_flag("--json", o.json, "One JSON record per measurement instead of tables");

    auto* t = o.train_cmd = cmd->add_subcommand("train", "ms per training step of an FFN block (d=512, m=2048, 4096 tokens)");
    t->add_option("--block", o.train.blocks, "relu, gelu and/or swiglu")->check(CLI::IsMember({"relu", "gelu", "swiglu"}));
    t->add_option("--threads", o.train.threads, "Thread counts to measure")->check(CLI::Range(1, 1024));
    t->add_option("--steps", o.train.steps, "Timed steps (the median is reported)")->check(CLI::Range(1, 1000));
    t->add_option("--tokens", o.train.tokens, "Tokens per batch")->check(CLI::Range(1, 1 << 20));
    t->add_option("--torch", o.train.python, "Python with torch for the same-run PyTorch figures");
    t->add_flag("--no-torch", o.no_torch, "No PyTorch figures");
    t->add_flag("--json", o.json, "One JSON record per measurement instead of a table");

    auto* w = o.sweep_cmd = cmd->add_subcommand("sweep", "Wall time of a whole sweep and microseconds per training step");
    w->add_option("-c,--config", o.sweep.config, "Config to time (its 'steps' key counts the steps)");
    w->add_option("--threads", o.sweep.threads, "Thread counts (default: all cores)")->check(CLI::Range(1, 1024));
    w->add_option("--repeats", o.sweep.repeats, "Timed runs (the median is reported)")->check(CLI::Range(1, 101));
    w->add_option("--torch", o.sweep.python, "Python with torch for the same-run PyTorch figure");
    w->add_flag("--no-torch", o.no_torch, "No PyTorch figure");
    w->add_flag("--json", o.json, "One JSON record per measurement instead of a table");
    return cmd;
}

namespace {

// Runs the config `repeats` times per thread count; a step is one optimizer
// update of one run, so steps = runs x the config's 'steps'.
// PyTorch's mean time per step over the config's runs, from the same nets
// timed one width and activation at a time (width_sweep configs only).
std::string torch_sweep_reference(const runner::Plan& plan, const SweepBenchOptions& o, double* us_per_step) {
    if (plan.kind->name != "width_sweep") return "not measured (no PyTorch reference for " + plan.kind->name + ")";
    std::map<std::pair<std::string, std::int64_t>, double> steps;  // (activation, width) -> steps
    std::int64_t samples = 0;
    for (const auto& run : plan.runs) {
        if (run.is_float64()) return "not measured (the reference trains float32; this config trains float64)";
        steps[{run.string("activation"), run.integer("model.width")}] += static_cast<double>(run.integer("steps"));
        if (samples != 0 && run.integer("samples") != samples)
            return "not measured (the runs' sample counts differ)";
        samples = run.integer("samples");
    }
    std::vector<std::string> args = {"sweep", "300", "3", std::to_string(samples)};
    for (const auto& [net, n] : steps) args.push_back(net.first + ":" + std::to_string(net.second));
    bench::TorchSession torch(o.python, args, 1);
    const std::vector<io::Json> records = torch.all_records();
    if (records.empty()) return torch.about();  // not run, or failed: it says why
    double total_us = 0;
    for (const auto& [net, n] : steps) {
        double us = -1;
        for (const auto& r : records)
            if (bench::text_field(r, "activation") == net.first &&
                bench::number_field(r, "width") == static_cast<double>(net.second))
                us = bench::number_field(r, "us_per_step");
        if (us <= 0)  // a net it did not time: no figure rather than a mean of some
            return torch.about() + " (no time for " + net.first + ":" + std::to_string(net.second) + ")";
        total_us += n * us;
    }
    double total_steps = 0;
    for (const auto& [net, n] : steps) total_steps += n;
    if (total_steps > 0) *us_per_step = total_us / total_steps;
    return torch.about();
}

report::Table bench_sweep(const SweepBenchOptions& o, std::string* torch_about) {
    const auto plan = runner::make_plan(runner::load_config(o.config, bundled_configs()), o.config, {}, experiments::all_kinds());
    double steps = 0;
    for (const auto& run : plan.runs) {
        if (!run.values.contains("steps")) throw Error(o.config + ": experiment '" + plan.kind->name + "' has no 'steps' to time");
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
        const double peak = gemm::measure_fma_peak_gflops(nullptr, n) * (float64 ? 0.5 : 1.0);
        const double wall = bench::median_seconds_per_call([&] { runner::execute(plan, {n, {}, {}}); }, o.repeats, 0.0);
        const report::Cell achieved = plan.kind->flops ? report::Cell{flops / wall * 1e-9} : report::Cell{};
        const report::Cell share = plan.kind->flops ? report::Cell{flops / wall * 1e-9 / peak} : report::Cell{};
        const double us_per_step_per_core = wall * double(n) / steps * 1e6;
        t.add_row({o.config, static_cast<std::int64_t>(plan.runs.size()), static_cast<std::int64_t>(steps),
                   static_cast<std::int64_t>(n), std::string(gemm::active_isa()), wall, us_per_step_per_core,
                   steps / wall, achieved, peak, share, torch_us > 0 ? report::Cell{torch_us} : report::Cell{},
                   torch_us > 0 ? report::Cell{torch_us / us_per_step_per_core} : report::Cell{}});
    }
    return t;
}

}  // namespace

int run_bench(const BenchOptions& o, char** argv) {
    int families = 0;
    const char* const* isas = gemm::supported_isas(&families);
    const bool uses_openblas = o.gemm_cmd->parsed() || !o.no_torch;  // itself, or through PyTorch
    const std::string core = uses_openblas ? bench::openblas_core_to_force(families > 0 ? isas[0] : "ref") : "";
    if (!core.empty()) {
        ::setenv("OPENBLAS_CORETYPE", core.c_str(), 1);
        ::setenv("FFNLAB_OPENBLAS_FALLBACK", "Prescott", 1);  // for the note below
        ::execv("/proc/self/exe", argv);
        // Only on failure: on with the fallback, and no note claiming otherwise.
        ::unsetenv("OPENBLAS_CORETYPE");
        ::unsetenv("FFNLAB_OPENBLAS_FALLBACK");
    }
    const bool gemm = o.gemm_cmd->parsed();
    bench::TrainBenchOptions train = o.train;
    SweepBenchOptions sweep = o.sweep;
    if (o.no_torch) train.python = sweep.python = "";
    std::string torch_about;
    const auto tables = gemm                      ? bench::bench_gemm(o.gemm)
                        : o.train_cmd->parsed()   ? bench::bench_train(train, &torch_about)
                                                  : std::vector<report::Table>{bench_sweep(sweep, &torch_about)};
    if (o.json) {
        // Kept in a named variable: a range-for over to_json(...)["rows"] would
        // walk a member of a temporary destroyed before the loop starts.
        report::Json table = report::to_json(tables[0]);
        if (!gemm)
            for (auto& row : table["rows"]) row["torch"] = torch_about;
        std::cout << table["rows"].dump(1) << "\n";
        return 0;
    }
    const char* fallback = std::getenv("FFNLAB_OPENBLAS_FALLBACK");
    if (const char* forced = std::getenv("OPENBLAS_CORETYPE"); fallback && forced)
        std::cout << "OPENBLAS_CORETYPE=" << forced << ": set by ffn-lab, as OpenBLAS took this CPU for "
                  << fallback << " (its SSE3 fallback)\n";
    if (gemm) {
        const bench::OpenBlas ob;
        std::cout << "OpenBLAS: " << (ob.available() ? ob.description() : "not installed (libopenblas0-pthread)") << "\n";
    } else {
        std::cout << "gemm kernels: " << ffn::gemm::active_isa() << "\nPyTorch: " << torch_about << "\n";
    }
    for (const auto& table : tables) std::cout << "\n## " << table.name() << "\n\n" << report::to_markdown(table);
    return 0;
}

}  // namespace ffn::app
