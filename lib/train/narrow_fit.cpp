#include "train/narrow_fit.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"
#include "core/isa.h"
#include "train/kernels/narrow_kernels.h"

namespace ffn::train {

namespace {

// The registry's row for the narrow trainer.
const PerIsa<kernels::NarrowFamily>& narrow_builds() {
    static const PerIsa<kernels::NarrowFamily> table{kernels::avx512_narrow(), kernels::avx2_narrow(), kernels::ref_narrow()};
    return table;
}

template <class T>
void pass_of_every_block(const NarrowPass<T>& pass) {
    const kernels::NarrowFamily& build = narrow_builds().active();
    if constexpr (sizeof(T) == 4) build.f32(pass);
    else build.f64(pass);
}

template <class T>
void require_narrow(const nn::MLP<T>& net, std::size_t width, nn::Activation activation) {
    if (net.layers.size() != 2 || net.layers[0].in_features() != 1 || net.layers[1].out_features() != 1 ||
        !net.layers[0].has_bias() || !net.layers[1].has_bias())
        throw Error("fit_narrow: every net must be 1-m-1 with biases");
    if (net.layers[0].out_features() != width || net.activation != activation)
        throw Error("fit_narrow: every net must have the same width and activation");
}

// Moves instance i's weights between its net and lane i % L of block i / L
// of the flat parameter array.
template <class T, class Copy>
void for_each_weight(nn::MLP<T>& net, T* params, std::size_t L, std::size_t width, std::size_t i, Copy copy) {
    T* block = params + (i / L) * (3 * width + 1) * L;
    const std::size_t lane = i % L;
    for (std::size_t j = 0; j < width; ++j) {
        copy(net.layers[0].weight(j, 0), block[j * L + lane]);
        copy(net.layers[0].bias(j), block[(width + j) * L + lane]);
        copy(net.layers[1].weight(0, j), block[(2 * width + j) * L + lane]);
    }
    copy(net.layers[1].bias(0), block[3 * width * L + lane]);
}

}  // namespace

std::size_t narrow_lanes() { return narrow_builds().active().lanes; }

template <class T>
std::vector<FitRecord> fit_narrow(std::span<nn::MLP<T>* const> nets, const OptimizerSpec& optimizer,
                                  std::span<const T> x, std::span<const T> y, const FitSpec& spec, const NarrowWatch& watch) {
    if (nets.empty()) return {};
    if (x.size() != y.size() || x.empty()) throw Error("fit_narrow: need as many targets as samples, at least one");
    if (spec.batch_size > 0 && static_cast<std::size_t>(spec.batch_size) < x.size())
        throw Error("fit_narrow: full-batch training only");
    const std::size_t L = narrow_lanes();
    const std::size_t m = nets.front()->layers[0].out_features(), count = nets.size();
    for (const auto* net : nets) require_narrow(*net, m, nets.front()->activation);

    const std::size_t blocks = (count + L - 1) / L, per_block = (3 * m + 1) * L;
    // Lanes beyond the last net train a zero net nobody reads.
    std::vector<T> params(blocks * per_block, T(0)), grads(params.size()), residual(x.size() * L);
    // What the smooth units' forward pass keeps for the backward pass.
    std::vector<T> kept(nn::is_piecewise_linear(nets.front()->activation) ? 0 : m * x.size() * 2 * L);
    std::vector<double> squared(blocks * L);
    for (std::size_t i = 0; i < count; ++i) for_each_weight(*nets[i], params.data(), L, m, i, [](T& from, T& to) { to = from; });
    Optimizer<T> opt({nn::ParamRef<T>{"narrow", {params.size()}, params.data(), grads.data()}}, optimizer);
    const NarrowPass<T> pass{nets.front()->activation, L, m, x.size(), blocks, x.data(), y.data(), params.data(),
                             grads.data(), residual.data(), kept.data(), squared.data()};

    std::vector<FitRecord> records(count);
    std::vector<bool> running(count, true);
    std::size_t still_running = count;
    const auto finish = [&](std::size_t i, const char* status) {
        for_each_weight(*nets[i], params.data(), L, m, i, [](T& to, T& from) { to = from; });
        records[i].status = status;
        running[i] = false;
        --still_running;
    };
    const double n = static_cast<double>(x.size());
    std::vector<std::size_t> stopping;
    for (long step = 1; step <= spec.steps && still_running > 0; ++step) {
        pass_of_every_block(pass);
        const bool record = step % std::max(1L, spec.record_every) == 0 || step == spec.steps;
        stopping.clear();
        for (std::size_t i = 0; i < count; ++i) {
            if (!running[i]) continue;
            const double loss = squared[i] / n;
            records[i].steps_done = step;
            if (!std::isfinite(loss)) {
                records[i].curve.emplace_back(step, loss);
                finish(i, "diverged");  // before the update, as train::fit stops
                continue;
            }
            const bool stop = spec.stop_below >= 0 && loss < spec.stop_below;
            if (record || stop) records[i].curve.emplace_back(step, loss);
            if (stop) stopping.push_back(i);
        }
        opt.step(learning_rate(spec.schedule, optimizer.lr, step - 1, spec.steps));
        for (std::size_t i : stopping) finish(i, "early_stop");  // after it, as train::fit stops
        if (watch) {
            std::vector<double> losses(count);
            for (std::size_t i = 0; i < count; ++i) {
                losses[i] = squared[i] / n;
                if (running[i]) for_each_weight(*nets[i], params.data(), L, m, i, [](T& to, T& from) { to = from; });
            }
            if (!watch(step, losses))
                for (std::size_t i = 0; i < count; ++i)
                    if (running[i]) finish(i, "stopped");
        }
    }
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({x.size(), std::size_t{1}}), Y = X;
    std::copy(x.begin(), x.end(), X.begin());
    std::copy(y.begin(), y.end(), Y.begin());
    for (std::size_t i = 0; i < count; ++i) {
        if (running[i]) finish(i, "ok");
        // As train::fit ends: the loss over the data through the net itself.
        records[i].final_loss = evaluate_loss(*nets[i], X, Y);
        if (!std::isfinite(records[i].final_loss)) records[i].status = "diverged";
    }
    return records;
}

template std::vector<FitRecord> fit_narrow<float>(std::span<nn::MLP<float>* const>, const OptimizerSpec&,
                                                  std::span<const float>, std::span<const float>, const FitSpec&, const NarrowWatch&);
template std::vector<FitRecord> fit_narrow<double>(std::span<nn::MLP<double>* const>, const OptimizerSpec&,
                                                   std::span<const double>, std::span<const double>, const FitSpec&, const NarrowWatch&);

}  // namespace ffn::train
