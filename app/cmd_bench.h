#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "bench/estimate_bench.h"
#include "bench/gemm_bench.h"
#include "bench/load_bench.h"
#include "bench/scale_bench.h"
#include "bench/sweep_bench.h"
#include "bench/tms_bench.h"
#include "bench/train_bench.h"

namespace ffn::app {

struct BenchOptions {
    bench::GemmBenchOptions gemm;
    bench::TrainBenchOptions train;
    bench::SweepBenchOptions sweep;
    bench::TmsBenchOptions tms;
    std::vector<std::string> tms_configs;
    bench::ScaleBenchOptions scale;
    bench::EstimateBenchOptions estimate;
    bench::LoadBenchOptions load;
    bool json = false;
    bool no_torch = false;
    CLI::App* gemm_cmd = nullptr;
    CLI::App* train_cmd = nullptr;
    CLI::App* sweep_cmd = nullptr;
    CLI::App* tms_cmd = nullptr;
    CLI::App* scale_cmd = nullptr;
    CLI::App* estimate_cmd = nullptr;
    CLI::App* load_cmd = nullptr;
};

CLI::App* setup_bench(CLI::App& app, BenchOptions& options);
// argv is the command line, for one case: when OpenBLAS would run its SSE3
// fallback on this CPU, the benchmark runs itself again with
// OPENBLAS_CORETYPE set (bench::openblas_core_to_force), so that OpenBLAS
// and PyTorch are measured at their best.
int run_bench(const BenchOptions& options, char** argv);

}  // namespace ffn::app
