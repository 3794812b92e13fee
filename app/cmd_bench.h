#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "bench/gemm_bench.h"
#include "bench/train_bench.h"

namespace ffn::app {

// `bench sweep`: a whole config run repeatedly, wall time per training step.
struct SweepBenchOptions {
    std::string config = "configs/width.json";
    std::vector<std::size_t> threads;  // empty: all cores
    int repeats = 5;
};

struct BenchOptions {
    bench::GemmBenchOptions gemm;
    bench::TrainBenchOptions train;
    SweepBenchOptions sweep;
    bool json = false;
    CLI::App* gemm_cmd = nullptr;
    CLI::App* train_cmd = nullptr;
    CLI::App* sweep_cmd = nullptr;
};

CLI::App* setup_bench(CLI::App& app, BenchOptions& options);
int run_bench(const BenchOptions& options);

}  // namespace ffn::app
