#include "bench/gemm_bench.h"

#include <chrono>
#include <cmath>
#include <map>
#include <regex>
#include <thread>

#include "bench/openblas.h"
#include "bench/timing.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/stats.h"
#include "gemm/gemm.h"

namespace ffn::bench {

GemmShape parse_gemm_shape(const std::string& text) {
    static const std::regex pattern(R"(^(\d+)x(\d+)x(\d+)(:t)?$)");
    std::smatch m;
    if (!std::regex_match(text, m, pattern))
        throw Error("--shape '" + text + "': expected MxKxN or MxKxN:t (e.g. 4096x512x2048)");
    GemmShape s{std::stoll(m[1]), std::stoll(m[2]), std::stoll(m[3]), m[4].matched, text};
    if (s.M < 1 || s.K < 1 || s.N < 1 || s.M * s.K > (1LL << 31) || s.K * s.N > (1LL << 31) || s.M * s.N > (1LL << 31))
        throw Error("--shape '" + text + "': each dimension must be >= 1 and each matrix under 2^31 elements");
    return s;
}

const std::vector<std::string>& default_gemm_shapes() {
    static const std::vector<std::string> shapes = {
        "256x256x256",    "512x512x512",     "1024x1024x1024",  "2048x2048x2048", "4096x512x2048",
        "4096x2048x512",  "512x4096x2048:t", "2048x4096x512:t", "256x64x256",     "1000x1x32",
        "1000x32x1",      "400x1x32",        "400x32x1"};
    return shapes;
}

namespace {

using report::Cell;
using report::ColumnType;

template <class T>
struct Problem {
    GemmShape shape;
    std::vector<T> A, B, C;
    std::int64_t lda() const { return shape.a_transposed ? shape.M : shape.K; }

    explicit Problem(const GemmShape& s) : shape(s) {
        Rng rng(fnv1a64(s.text));
        A.resize(static_cast<std::size_t>(s.M * s.K));
        B.resize(static_cast<std::size_t>(s.K * s.N));
        C.assign(static_cast<std::size_t>(s.M * s.N), T(0));
        for (auto& v : A) v = static_cast<T>(rng.uniform(-1, 1));
        for (auto& v : B) v = static_cast<T>(rng.uniform(-1, 1));
    }
    T a(std::int64_t i, std::int64_t k) const {
        return shape.a_transposed ? A[static_cast<std::size_t>(k * shape.M + i)] : A[static_cast<std::size_t>(i * shape.K + k)];
    }
    void run_ours() {
        gemm::gemm<T>(shape.a_transposed ? gemm::Trans::yes : gemm::Trans::no, gemm::Trans::no, shape.M, shape.N,
                      shape.K, T(1), A.data(), lda(), B.data(), shape.N, T(0), C.data(), shape.N);
    }
    void run_openblas(const OpenBlas& ob) {
        ob.gemm(shape.a_transposed, false, shape.M, shape.N, shape.K, T(1), A.data(), lda(), B.data(), shape.N, T(0),
                C.data(), shape.N);
    }
    // Largest error over sampled entries, relative to sum_k |a_ik b_kj| (the
    // scale rounding error is proportional to); the reference sums in long
    // double.
    double sampled_relative_error() const {
        Rng rng(7);
        double worst = 0;
        for (int s = 0; s < 512; ++s) {
            const auto i = static_cast<std::int64_t>(rng.uniform01() * static_cast<double>(shape.M));
            const auto j = static_cast<std::int64_t>(rng.uniform01() * static_cast<double>(shape.N));
            long double sum = 0, scale = 0;
            for (std::int64_t k = 0; k < shape.K; ++k) {
                const long double p = static_cast<long double>(a(i, k)) * B[static_cast<std::size_t>(k * shape.N + j)];
                sum += p;
                scale += std::fabs(p);
            }
            const double err = static_cast<double>(std::fabs(C[static_cast<std::size_t>(i * shape.N + j)] - sum));
            worst = std::max(worst, scale > 0 ? err / static_cast<double>(scale) : err);
        }
        return worst;
    }
};

// Every family the machine has but the reference, best first.
std::vector<Isa> default_isas() {
    std::vector<Isa> out;
    for (const Isa isa : supported_isas())
        if (isa != Isa::ref) out.insert(out.begin(), isa);
    if (out.empty()) out.push_back(Isa::ref);
    return out;
}

template <class T>
void bench_shape(const GemmShape& shape, const std::string& dtype, const GemmBenchOptions& o,
                 const std::vector<Isa>& isas, const OpenBlas& ob, const std::map<std::pair<Isa, std::size_t>, double>& peak,
                 report::Table& t) {
    Problem<T> p(shape);
    const double flops = 2.0 * static_cast<double>(shape.M) * static_cast<double>(shape.N) * static_cast<double>(shape.K);
    for (std::size_t threads : o.threads) {
        Cell ob_gflops{};
        if (ob.available()) {
            ob.set_threads(static_cast<int>(threads));
            ob_gflops = flops / median_seconds_per_call([&] { p.run_openblas(ob); }, o.repeats) / 1e9;
            // OpenBLAS's workers spin on sched_yield for about 2^28 cycles after
            // a call before they sleep; measured at once, our threads would share
            // the cores with them (seen: 512^3 on 2 threads at half speed in
            // some runs). Let them park first.
            if (threads > 1) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        }
        for (const Isa isa : isas) {
            set_isa(isa);
            gemm::set_max_threads(threads);
            p.run_ours();
            const double err = p.sampled_relative_error();  // correctness before speed
            // A double FMA does half the flops of a float one per vector.
            const double dtype_factor = sizeof(T) == 8 ? 0.5 : 1.0;
            // The clock of a shared machine drifts with its neighbours' load:
            // a short peak measurement before each batch gives that batch's
            // own yardstick (the run's one peak gives the other share).
            std::vector<double> batch_peak;
            const auto batches = batch_seconds_per_call([&] { p.run_ours(); }, o.repeats, 0.05, [&] {
                batch_peak.push_back(gemm::measure_fma_peak_gflops(isa, threads, 0.01) * dtype_factor);
            });
            std::vector<double> batch_share;
            for (std::size_t b = 0; b < batches.size(); ++b) batch_share.push_back(flops / batches[b] / 1e9 / batch_peak[b]);
            const double seconds = median(batches);
            const double gflops = flops / seconds / 1e9;
            const double machine_peak = peak.at({isa, threads}) * dtype_factor;
            Cell ratio{};
            if (auto x = report::as_number(ob_gflops)) ratio = gflops / *x;
            t.add_row({shape.text, dtype, static_cast<std::int64_t>(threads), std::string(isa_name(isa)), gflops, seconds * 1e6,
                       gflops / machine_peak, median(batch_share), err, ob_gflops, ratio});
        }
    }
}

}  // namespace

std::vector<report::Table> bench_gemm(const GemmBenchOptions& o) {
    std::vector<GemmShape> shapes;
    for (const auto& s : o.shapes.empty() ? default_gemm_shapes() : o.shapes) shapes.push_back(parse_gemm_shape(s));
    const std::vector<Isa> isas = o.isas.empty() ? default_isas() : o.isas;
    for (const Isa isa : isas)
        if (!isa_supported(isa)) throw Error(std::string("--isa ") + isa_name(isa) + ": this machine cannot run it");
    const Isa previous_isa = active_isa();
    const std::size_t previous_threads = gemm::max_threads();
    const OpenBlas ob;

    report::Table peak_table("peak");
    peak_table.add_column("isa", ColumnType::text)
        .add_column("threads", ColumnType::integer)
        .add_column("fp32_gflops", ColumnType::real, 4, true)
        .add_column("fp64_gflops", ColumnType::real, 4, true);
    std::map<std::pair<Isa, std::size_t>, double> peak;
    for (const Isa isa : isas)
        for (std::size_t threads : o.threads) {
            double best = 0;
            for (int r = 0; r < 3; ++r) best = std::max(best, gemm::measure_fma_peak_gflops(isa, threads));
            peak[{isa, threads}] = best;
            peak_table.add_row({std::string(isa_name(isa)), static_cast<std::int64_t>(threads), best, best / 2});
        }

    report::Table t("gemm");
    t.add_column("shape", ColumnType::text)
        .add_column("dtype", ColumnType::text)
        .add_column("threads", ColumnType::integer)
        .add_column("isa", ColumnType::text)
        .add_column("gflops", ColumnType::real, 4, true)
        .add_column("us_per_call", ColumnType::real, 4, true)
        .add_column("peak_share", ColumnType::real, 3, true)
        .add_column("batch_peak_share", ColumnType::real, 3, true)
        .add_column("max_rel_err", ColumnType::real, 2, true)
        .add_column("openblas_gflops", ColumnType::real, 4, true)
        .add_column("ratio_vs_openblas", ColumnType::real, 3, true);
    for (const auto& shape : shapes)
        for (const auto& dtype : o.dtypes) {
            if (dtype == "float32") bench_shape<float>(shape, dtype, o, isas, ob, peak, t);
            else if (dtype == "float64") bench_shape<double>(shape, dtype, o, isas, ob, peak, t);
            else throw Error("--dtype " + dtype + ": expected float32 or float64");
        }
    set_isa(previous_isa);
    gemm::set_max_threads(previous_threads);
    return {t, peak_table};
}

}  // namespace ffn::bench
