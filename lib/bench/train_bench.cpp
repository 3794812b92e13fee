#include "bench/train_bench.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "core/error.h"
#include "core/rng.h"
#include "core/stats.h"
#include "gemm/gemm.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "train/loss.h"
#include "train/optimizer.h"
#include "report/text.h"

namespace ffn::bench {

namespace {

using report::ColumnType;

struct Block {
    std::unique_ptr<nn::Module<float>> model;
    double flops_per_step = 0;
    std::size_t hidden = 0;
};

// The products per step PyTorch also does when x needs no gradient:
// relu/gelu forward 2 + backward 3 (dW2, dH, dW1); swiglu 3 + 4.
Block make_block(const std::string& kind, const TrainBenchOptions& o) {
    Block b;
    const double per_product = 2.0 * static_cast<double>(o.tokens) * static_cast<double>(o.d);
    if (kind == "relu" || kind == "gelu") {
        b.hidden = o.hidden;
        b.model = std::make_unique<nn::MLP<float>>(std::vector<std::size_t>{o.d, o.hidden, o.d},
                                                   kind == "relu" ? nn::Activation::relu : nn::Activation::gelu);
        b.flops_per_step = 5 * per_product * static_cast<double>(o.hidden);
    } else if (kind == "swiglu") {
        b.hidden = o.swiglu_hidden;
        b.model = std::make_unique<nn::GatedMLP<float>>(o.d, o.swiglu_hidden, nn::Activation::silu, /*bias=*/true);
        b.flops_per_step = 7 * per_product * static_cast<double>(o.swiglu_hidden);
    } else {
        throw Error("--block " + kind + ": expected relu, gelu or swiglu");
    }
    return b;
}

}  // namespace

std::vector<report::Table> bench_train(const TrainBenchOptions& o, std::string* torch_about) {
    const std::size_t previous_threads = gemm::max_threads();
    report::Table t("train");
    t.add_column("block", ColumnType::text)
        .add_column("hidden", ColumnType::integer)
        .add_column("threads", ColumnType::integer)
        .add_column("isa", ColumnType::text)
        .add_column("ms_per_step", ColumnType::real, 4, true)
        .add_column("ms_min", ColumnType::real, 4, true)
        .add_column("gflops", ColumnType::real, 4, true)
        // The FMA peak of these threads measured in this run: a note quoting
        // the figures then says which machine kind made them (full-rate or
        // half-rate AVX-512), as bench gemm's peak table does.
        .add_column("peak_gflops", ColumnType::real, 4, true)
        .add_column("peak_share", ColumnType::real, 3, true)
        .add_column("final_loss", ColumnType::real, 6, true)
        .add_column("torch_ms_per_step", ColumnType::real, 4, true)
        // PyTorch's time over ours, step by step (its step runs just before
        // ours): the median of those ratios and their quartiles. Above 1,
        // ffn-lab is faster. A ratio per pair, not a ratio of two medians: the
        // host's speed drifts by more than the margin within a series.
        .add_column("vs_torch", ColumnType::real, 3, true)
        .add_column("vs_torch_q25", ColumnType::real, 3, true)
        .add_column("vs_torch_q75", ColumnType::real, 3, true);
    Rng data = Rng::stream(0, 0, "bench-data");
    nn::Matrix<float> X = nn::Matrix<float>::from_shape({o.tokens, o.d}), Y = nn::Matrix<float>::from_shape({o.tokens, o.d});
    for (auto& x : X) x = static_cast<float>(data.normal());
    for (auto& y : Y) y = static_cast<float>(data.normal());

    for (std::size_t threads : o.threads) {
        const double peak = gemm::measure_fma_peak_gflops(std::nullopt, threads);
        // PyTorch on the same threads, one step of its own after each of
        // ours, so that both medians come from the same moments of a shared
        // machine (whose speed moved by half within seconds here).
        TorchSession torch(o.python,
                           {"train", std::to_string(threads), std::to_string(o.tokens), std::to_string(o.d),
                            std::to_string(o.hidden), std::to_string(o.swiglu_hidden)},
                           threads);
        for (const auto& kind : o.blocks) {
            gemm::set_max_threads(threads);
            Block b = make_block(kind, o);
            Rng init = Rng::stream(0, 0, "bench-init");
            nn::initialize(*b.model, {nn::InitScheme::torch_default}, init);
            train::Optimizer<float> opt(b.model->parameters(), {train::OptimizerKind::adam, 1e-3});
            nn::Matrix<float> grad;
            double loss = 0;
            auto step = [&] {
                loss = train::mse_loss(b.model->forward(X), Y, grad);
                b.model->backward(grad, /*need_input_grad=*/false);
                opt.step();
            };
            step();  // warm-up: buffers are allocated here, never in the timed steps
            std::vector<double> ms, torch_ms;
            for (int s = 0; s < o.steps; ++s) {
                // An answer for another block (a stray line of some library's)
                // is no answer: the steps would no longer pair up.
                if (const auto answer = torch.ask(kind);
                    answer && text_field(*answer, "block") == kind && number_field(*answer, "ms") > 0)
                    torch_ms.push_back(number_field(*answer, "ms"));
                const auto t0 = std::chrono::steady_clock::now();
                step();
                ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
            }
            const double ms_median = median(ms);
            const double gflops = b.flops_per_step / (ms_median / 1e3) / 1e9;
            const bool have_torch = torch.ok() && torch_ms.size() == ms.size();
            std::vector<double> ratio;
            if (have_torch)
                for (std::size_t i = 0; i < ms.size(); ++i) ratio.push_back(torch_ms[i] / ms[i]);
            const auto if_torch = [&](double x) { return have_torch ? report::Cell{x} : report::Cell{}; };
            t.add_row({kind, static_cast<std::int64_t>(b.hidden), static_cast<std::int64_t>(threads),
                       std::string(isa_name(active_isa())), ms_median, *std::min_element(ms.begin(), ms.end()), gflops, peak,
                       gflops / peak, loss, if_torch(median(torch_ms)), if_torch(median(ratio)), if_torch(percentile(ratio, 25)),
                       if_torch(percentile(ratio, 75))});
        }
        // One line for every thread count, unless they all say the same.
        if (torch_about) {
            const std::string here = torch.about();
            if (torch_about->empty()) *torch_about = here;
            else if (torch_about->find(here) == std::string::npos)
                *torch_about += "; on " + report::counted(threads, "thread") + ": " + here;
        }
    }
    gemm::set_max_threads(previous_threads);
    return {t};
}

}  // namespace ffn::bench
