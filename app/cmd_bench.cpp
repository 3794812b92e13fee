#include "cmd_bench.h"

#include <iostream>

#include "bench/openblas.h"
#include "gemm/gemm.h"
#include "report/writers.h"

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
    t->add_flag("--json", o.json, "One JSON record per measurement instead of a table");
    return cmd;
}

int run_bench(const BenchOptions& o) {
    const bool gemm = o.gemm_cmd->parsed();
    const auto tables = gemm ? bench::bench_gemm(o.gemm) : bench::bench_train(o.train);
    if (o.json) {
        report::Json out = report::Json::array();
        for (const auto& row : report::to_json(tables[0])["rows"]) out.push_back(row);
        std::cout << out.dump(1) << "\n";
        return 0;
    }
    if (gemm) {
        const bench::OpenBlas ob;
        std::cout << "OpenBLAS: " << (ob.available() ? ob.description() : "not installed (libopenblas0-pthread)") << "\n";
    } else {
        std::cout << "gemm kernels: " << ffn::gemm::active_isa() << "\n";
    }
    for (const auto& table : tables) std::cout << "\n## " << table.name() << "\n\n" << report::to_markdown(table);
    return 0;
}

}  // namespace ffn::app
