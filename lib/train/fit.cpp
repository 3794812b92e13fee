#include "train/fit.h"

#include <cmath>
#include <numeric>

#include "core/error.h"
#include "core/names.h"
#include "train/loss.h"

namespace ffn::train {

namespace {

template <class T>
void gather_rows(const nn::Matrix<T>& from, const std::vector<std::size_t>& order, std::size_t begin, std::size_t count,
                 nn::Matrix<T>& to) {
    const std::size_t cols = from.shape()[1];
    nn::ensure_shape(to, count, cols);
    // An element loop, not std::copy_n: rows are a few dozen values, where
    // a call to memmove per row cost planted_features 7% of its time.
    for (std::size_t r = 0; r < count; ++r) {
        const T* __restrict src = from.data() + order[begin + r] * cols;
        T* __restrict dst = to.data() + r * cols;
        for (std::size_t c = 0; c < cols; ++c) dst[c] = src[c];
    }
}

}  // namespace


template <class T>
double evaluate_loss(nn::Module<T>& model, const nn::Matrix<T>& X, const nn::Matrix<T>& Y) {
    nn::Matrix<T> grad;
    return mse_loss(model.forward(X), Y, grad);
}

template <class T>
FitRecord fit(nn::Module<T>& model, Optimizer<T>& optimizer, const nn::Matrix<T>& X, const nn::Matrix<T>& Y,
              const FitSpec& spec, Rng& shuffle, const std::function<void(long, long, double)>& progress) {
    if (X.shape()[0] != Y.shape()[0]) throw Error("fit: inputs and targets have different numbers of rows");
    const std::size_t rows = X.shape()[0];
    const bool full = spec.batch_size <= 0 || static_cast<std::size_t>(spec.batch_size) >= rows;
    const std::size_t batch = full ? rows : static_cast<std::size_t>(spec.batch_size);
    std::vector<std::size_t> order(rows);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::size_t cursor = rows;  // forces a shuffle before the first minibatch
    nn::Matrix<T> xb, yb, grad;

    FitRecord record;
    for (long step = 1; step <= spec.steps; ++step) {
        const nn::Matrix<T>* xs = &X;
        const nn::Matrix<T>* ys = &Y;
        if (!full) {
            if (cursor + batch > rows) {
                shuffle.shuffle(order);
                cursor = 0;
            }
            gather_rows(X, order, cursor, batch, xb);
            gather_rows(Y, order, cursor, batch, yb);
            cursor += batch;
            xs = &xb;
            ys = &yb;
        }
        const double loss = mse_loss(model.forward(*xs), *ys, grad);
        record.steps_done = step;
        if (!std::isfinite(loss)) {
            record.curve.emplace_back(step, loss);
            record.status = "diverged";
            record.final_loss = loss;
            return record;
        }
        model.backward(grad, /*need_input_grad=*/false);
        optimizer.step(learning_rate(spec.schedule, optimizer.spec().lr, step - 1, spec.steps));
        const bool stop = spec.stop_below >= 0 && loss < spec.stop_below;
        if (step % std::max(1L, spec.record_every) == 0 || step == spec.steps || stop) {
            record.curve.emplace_back(step, loss);
            if (progress) progress(step, spec.steps, loss);
        }
        if (stop) {
            record.status = "early_stop";
            break;
        }
    }
    record.final_loss = evaluate_loss(model, X, Y);
    if (!std::isfinite(record.final_loss)) record.status = "diverged";
    return record;
}

template FitRecord fit<float>(nn::Module<float>&, Optimizer<float>&, const nn::Matrix<float>&, const nn::Matrix<float>&,
                              const FitSpec&, Rng&, const std::function<void(long, long, double)>&);
template FitRecord fit<double>(nn::Module<double>&, Optimizer<double>&, const nn::Matrix<double>&,
                               const nn::Matrix<double>&, const FitSpec&, Rng&,
                               const std::function<void(long, long, double)>&);
template double evaluate_loss<float>(nn::Module<float>&, const nn::Matrix<float>&, const nn::Matrix<float>&);
template double evaluate_loss<double>(nn::Module<double>&, const nn::Matrix<double>&, const nn::Matrix<double>&);

}  // namespace ffn::train
