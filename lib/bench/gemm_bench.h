#pragma once
// `ffn-lab bench gemm`: GFLOP/s of the gemm core per shape, dtype, thread
// count and ISA, checked for correctness before it is timed, beside the
// machine's measured FMA peak and OpenBLAS's figure from the same run.
#include <string>
#include <vector>

#include "core/isa.h"
#include "report/table.h"

namespace ffn::bench {

struct GemmShape {
    std::int64_t M = 0, K = 0, N = 0;
    bool a_transposed = false;  // ":t": A stored K x M
    std::string text;           // as given, e.g. "512x4096x2048:t"
};

// "MxKxN" or "MxKxN:t"; throws ffn::Error naming the text when malformed.
GemmShape parse_gemm_shape(const std::string& text);
const std::vector<std::string>& default_gemm_shapes();

struct GemmBenchOptions {
    std::vector<std::string> shapes;  // empty: the default list
    std::vector<std::string> dtypes = {"float32", "float64"};
    std::vector<std::size_t> threads = {1, 2};
    std::vector<Isa> isas;  // empty: every SIMD family the machine has (ref only when asked)
    int repeats = 5;
};

// Tables "gemm" (one row per measurement) and "peak" (the FMA peak per ISA
// and thread count, the best of three at the start). A row's peak_share is
// its GFLOP/s over that peak; batch_peak_share the median over its timed
// batches of each batch's GFLOP/s over a 10 ms peak measured just before
// it, which follows the clock when neighbours' load moves it.
std::vector<report::Table> bench_gemm(const GemmBenchOptions& options);

}  // namespace ffn::bench
