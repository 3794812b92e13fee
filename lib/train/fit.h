#pragma once
// The training loop: full-batch or minibatch steps of forward, MSE loss,
// backward and an optimizer update, with the loss recorded every few steps.
// A run whose loss turns NaN or infinite stops there and says so in its
// record; it never hands on a table of NaNs as a result.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/rng.h"
#include "nn/module.h"
#include "train/optimizer.h"

namespace ffn::train {

struct FitSpec {
    long steps = 1000;
    long batch_size = 0;     // 0: full batch
    long record_every = 100; // loss curve spacing (the last step is always recorded)
    double stop_below = -1;  // early stop once the step's loss is below this (negative: never)
    ScheduleSpec schedule;
};

struct FitRecord {
    std::vector<std::pair<long, double>> curve;  // (step, loss of that step's batch), 1-based steps
    double final_loss = 0.0;                     // loss over the whole data after training
    long steps_done = 0;
    std::string status = "ok";  // ok | early_stop | diverged
};

// Trains `model` on rows of X against rows of Y. `shuffle` orders the
// minibatches (unused for full batch). `progress(step, total, loss)` is
// called after each recorded step.
template <class T>
FitRecord fit(nn::Module<T>& model, Optimizer<T>& optimizer, const nn::Matrix<T>& X, const nn::Matrix<T>& Y,
              const FitSpec& spec, Rng& shuffle, const std::function<void(long, long, double)>& progress = {});

// The MSE of `model` on (X, Y) without training.
template <class T>
double evaluate_loss(nn::Module<T>& model, const nn::Matrix<T>& X, const nn::Matrix<T>& Y);

}  // namespace ffn::train
