#include "cmd_bench.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>

#include "bench/openblas.h"
#include "bench/timing.h"
#include "common.h"
#include "core/error.h"
#include "core/thread_pool.h"
#include "experiments/registry.h"
#include "runner/check.h"
#include "runner/execute.h"
#include "core/isa.h"
#include "report/table_io.h"

namespace ffn::app {

CLI::App* setup_bench(CLI::App& app, BenchOptions& o) {
    auto* cmd = app.add_subcommand("bench", "Benchmarks (medians over repeated runs, with same-run references)");
    cmd->require_subcommand(1);

    auto* g = o.gemm_cmd = cmd->add_subcommand("gemm", "GFLOP/s of the gemm core vs the FMA peak and OpenBLAS");
    g->add_option("--shape", o.gemm.shapes, "MxKxN or MxKxN:t (A stored transposed); repeatable (default: the FFN list)");
    g->add_option("--dtype", o.gemm.dtypes, "float32 and/or float64")->check(CLI::IsMember({"float32", "float64"}));
    g->add_option("--threads", o.gemm.threads, "Thread counts to measure")->check(CLI::Range(1, 1024));
    g->add_option_function<std::vector<std::string>>(
         "--isa",
         [&o](const std::vector<std::string>& names) {
             for (const auto& name : names) o.gemm.isas.push_back(*parse_isa(name));  // the check below knows each name
         },
         "Kernel families (default: every SIMD family the machine has)")
        ->check(CLI::IsMember(isa_names()));
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

    auto* m = o.tms_cmd = cmd->add_subcommand(
        "tms", "Toy models of superposition: microseconds per model and step, shape by shape, beside PyTorch");
    m->add_option("configs", o.tms_configs, "toy_superposition configs, in order (default: the bundled tms_*.json)");
    m->add_option("--threads", o.tms.threads, "Thread counts to measure")->check(CLI::Range(1, 1024));
    m->add_option("--repeats", o.tms.repeats, "Timed batches per measurement (the median is reported)")->check(CLI::Range(1, 101));
    m->add_option("--torch", o.tms.python, "Python with torch for the same-run PyTorch figures");
    m->add_flag("--no-torch", o.no_torch, "No PyTorch figures");
    m->add_flag("--json", o.json, "One JSON record per measurement instead of a table");

    auto* s = o.scale_cmd = cmd->add_subcommand(
        "scale", "Wall time, peak memory, per-run overhead and cache bytes per run of sweeps of many runs");
    s->add_option("-c,--config", o.scale.config, "A tiny config whose seeds are widened (default: configs/smoke/width_small.json)");
    s->add_option("--runs", o.scale.runs, "Run counts to measure (default: 10000 100000 1000000)")->check(CLI::Range(1, 100000000));
    s->add_option("--steps", o.scale.steps, "Training steps per run of the timed sweeps")->check(CLI::Range(0L, 100000000L));
    s->add_option("--threads", o.scale.threads, "Worker threads (0: all cores)")->check(CLI::Range(0, 1024));
    s->add_flag("--json", o.json, "One JSON record per measurement instead of a table");

    auto* e = o.estimate_cmd = cmd->add_subcommand(
        "estimate", "sweep --dry-run's estimate against the sweep's wall time, config by config, from an empty speed store");
    e->add_option("configs", o.estimate.configs, "Configs, in order (default: every bundled config)");
    e->add_option("--threads", o.estimate.threads, "Worker threads (0: all cores)")->check(CLI::Range(0, 1024));
    e->add_flag("--json", o.json, "One JSON record per config instead of a table");

    auto* l = o.load_cmd = cmd->add_subcommand(
        "load", "Seconds and peak memory to load one MLP layer of a sparse synthetic checkpoint of Llama-7B's shapes (BF16, 2 shards)");
    l->add_option("--layer", o.load.layer, "The block loaded (0-31)")->check(CLI::Range(0, 31));
    l->add_option("--repeats", o.load.repeats, "Loads timed, each in a child of its own (the median is reported)")->check(CLI::Range(1, 101));
    l->add_option("--folder", o.load.folder, "Where the sparse checkpoint is written (default: a temporary folder, removed after)");
    l->add_flag("--json", o.json, "One JSON record instead of a table");
    return cmd;
}

int run_bench(const BenchOptions& o, char** argv) {
    const bool uses_openblas =
        o.gemm_cmd->parsed() || (!o.no_torch && !o.scale_cmd->parsed() && !o.estimate_cmd->parsed() && !o.load_cmd->parsed());  // itself, or through PyTorch
    const std::string core = uses_openblas ? bench::openblas_core_to_force(supported_isas().back()) : "";
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
    bench::SweepBenchOptions sweep = o.sweep;
    bench::TmsBenchOptions tms = o.tms;
    if (o.no_torch) train.python = sweep.python = tms.python = "";
    std::string torch_about;
    if (o.scale_cmd->parsed() || o.estimate_cmd->parsed() || o.load_cmd->parsed()) {
        bench::EstimateBenchOptions estimate = o.estimate;
        estimate.bundled = bundled_configs();
        if (estimate.configs.empty() && o.estimate_cmd->parsed()) {
            const std::string root = find_root("");
            if (root.empty()) throw Error("bench estimate: not inside an ffn-lab checkout; name the configs");
            estimate.configs = runner::bundled_configs(root);
        }
        const report::Table t = o.scale_cmd->parsed() ? bench::bench_scale(o.scale, experiments::all_kinds())
                                : o.load_cmd->parsed() ? bench::bench_load(o.load)
                                                       : bench::bench_estimate(estimate, experiments::all_kinds());
        if (o.json) std::cout << report::to_json(t)["rows"].dump(1) << "\n";
        else std::cout << "## " << t.name() << "\n\n" << report::to_markdown(t);
        return 0;
    }
    const auto tms_table = [&] {
        std::vector<std::string> configs = o.tms_configs;
        if (configs.empty()) {
            const std::string root = find_root("");
            if (root.empty()) throw Error("bench tms: not inside an ffn-lab checkout; name the configs");
            for (const std::string& c : runner::bundled_configs(root))
                if (std::filesystem::path(c).filename().string().starts_with("tms_")) configs.push_back(c);
        }
        std::vector<std::pair<std::string, runner::Plan>> plans;
        for (const std::string& c : configs)
            plans.emplace_back(c, runner::make_plan(runner::load_config(c, bundled_configs()), c, {}, experiments::all_kinds()));
        return std::vector<report::Table>{bench::bench_tms(plans, tms, &torch_about)};
    };
    const auto tables = gemm                      ? bench::bench_gemm(o.gemm)
                        : o.tms_cmd->parsed()     ? tms_table()
                        : o.train_cmd->parsed()   ? bench::bench_train(train, &torch_about)
                                                  : std::vector<report::Table>{bench::bench_sweep(runner::make_plan(runner::load_config(sweep.config, bundled_configs()), sweep.config, {}, experiments::all_kinds()), sweep, &torch_about)};
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
        std::cout << "gemm kernels: " << ffn::isa_name(ffn::active_isa()) << "\nPyTorch: " << torch_about << "\n";
    }
    for (const auto& table : tables) std::cout << "\n## " << table.name() << "\n\n" << report::to_markdown(table);
    return 0;
}

}  // namespace ffn::app
