#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "bench/gemm_bench.h"
#include "bench/train_bench.h"

namespace ffn::app {

struct BenchOptions {
    bench::GemmBenchOptions gemm;
    bench::TrainBenchOptions train;
    bool json = false;
    CLI::App* gemm_cmd = nullptr;
    CLI::App* train_cmd = nullptr;
};

CLI::App* setup_bench(CLI::App& app, BenchOptions& options);
int run_bench(const BenchOptions& options);

}  // namespace ffn::app
