#pragma once
// Optimizers with PyTorch 1.13's update formulas (torch/optim/sgd.py and
// adam.py / adamw.py, the single-tensor code paths), applied in the
// parameters' own scalar type:
//
// SGD     g = grad + wd * p;  buf = g (first step) or momentum * buf + (1 - dampening) * g;
//         g = nesterov ? g + momentum * buf : buf  (when momentum != 0);  p = p - lr * g
// Adam    g = grad + wd * p;  m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + ((1 - beta2) * g) * g
//         denom = sqrt(v) / sqrt(1 - beta2^t) + eps;  p = p + (-lr / (1 - beta1^t)) * (m / denom)
// AdamW   p = p * (1 - lr * wd), then Adam with no weight decay in g.
// Bias corrections are computed in double (Python floats in PyTorch).
//
// One departure: a moment m or v below the smallest normal number of T is
// stored as zero. A weight whose gradient has become exactly zero (a dead
// ReLU unit) sees its m decay by beta1 each step through the subnormal
// range, where x86 arithmetic takes a microcode assist of about a hundred
// cycles per operation: 4.5% of the moments of the width sweep, 15% of its
// time. What such an m adds to a weight, lr * m / denom with denom >= eps,
// is below lr * 1e-30 and moves no weight larger than about 1e-23
// (float32); the later m of a gradient that comes back is the same once
// rounded. v is flushed by the same rule: a subnormal v adds at most 1e-19
// to sqrt(v), far below eps (1e-8), the only other part of denom then.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "nn/module.h"

namespace ffn::train {

enum class OptimizerKind { sgd, adam, adamw };
const std::vector<std::string>& optimizer_names();
// Throws ffn::Error naming the optimizers when `name` is not one.
OptimizerKind parse_optimizer(std::string_view name);

struct OptimizerSpec {
    OptimizerKind kind = OptimizerKind::adam;
    double lr = 1e-3;
    double momentum = 0.0, dampening = 0.0;
    bool nesterov = false;
    double weight_decay = 0.0;
    double beta1 = 0.9, beta2 = 0.999, eps = 1e-8;
};

template <class T>
class Optimizer {
public:
    // Throws ffn::Error for a parameter without a gradient.
    Optimizer(std::vector<nn::ParamRef<T>> params, OptimizerSpec spec);

    // One update of every parameter from its gradient, at learning rate lr
    // (a schedule's value; spec.lr is the base).
    void step(double lr);
    void step() { step(spec_.lr); }
    // Parameter k's momentum buffer (SGD) or first moment m (Adam).
    std::span<const T> first_moment(std::size_t k) const { return first_[k]; }
    const OptimizerSpec& spec() const { return spec_; }

private:
    std::vector<nn::ParamRef<T>> params_;
    OptimizerSpec spec_;
    std::vector<std::vector<T>> first_, second_;  // momentum buffers / Adam moments
    long steps_ = 0;
};

// Learning-rate schedules: constant; linear warmup over `warmup` steps to
// the base rate; cosine decay to min_lr after the warmup.
enum class ScheduleKind { constant, warmup, cosine };
const std::vector<std::string>& schedule_names();
ScheduleKind parse_schedule(std::string_view name);

struct ScheduleSpec {
    ScheduleKind kind = ScheduleKind::constant;
    long warmup = 0;
    double min_lr = 0.0;
};

// The rate for 0-based `step` of `total`.
double learning_rate(const ScheduleSpec& schedule, double base_lr, long step, long total);

}  // namespace ffn::train
