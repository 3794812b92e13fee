#include "train/optimizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "core/error.h"
#include "core/math.h"
#include "core/names.h"
#include "core/isa.h"
#include "gemm/gemm.h"
#include "train/kernels/adam_kernels.h"

namespace ffn::train {

namespace {
// The registry's row for Adam's update.
const PerIsa<kernels::AdamFamily>& adam_builds() {
    static const PerIsa<kernels::AdamFamily> table{kernels::avx512_adam(), kernels::avx2_adam(), kernels::ref_adam()};
    return table;
}
}  // namespace

const std::vector<std::string>& optimizer_names() {
    static const std::vector<std::string> names = {"sgd", "adam", "adamw"};
    return names;
}

const std::vector<std::string>& schedule_names() {
    static const std::vector<std::string> names = {"constant", "warmup", "cosine"};
    return names;
}

OptimizerKind parse_optimizer(std::string_view name) { return parse_name<OptimizerKind>(name, optimizer_names(), "optimizer"); }
ScheduleKind parse_schedule(std::string_view name) { return parse_name<ScheduleKind>(name, schedule_names(), "schedule"); }

template <class T>
Optimizer<T>::Optimizer(std::vector<nn::ParamRef<T>> params, OptimizerSpec spec)
    : params_(std::move(params)), spec_(std::move(spec)) {
    for (const auto& p : params_) {
        if (!p.grad) throw Error("parameter '" + p.name + "' has no gradient buffer");
        first_.emplace_back(p.size(), T(0));
        second_.emplace_back(spec_.kind == OptimizerKind::sgd ? 0 : p.size(), T(0));
    }
}

namespace {
// Below this many values a tensor's update is not worth waking a thread for
// (a few microseconds of work).
constexpr std::size_t kParallelMinValues = std::size_t{1} << 16;
}  // namespace

template <class T>
void Optimizer<T>::step(double lr_d) {
    ++steps_;
    const T lr = static_cast<T>(lr_d), wd = static_cast<T>(spec_.weight_decay);
    if (spec_.kind == OptimizerKind::sgd) {
        const T momentum = static_cast<T>(spec_.momentum), keep = static_cast<T>(1 - spec_.dampening);
        for (std::size_t k = 0; k < params_.size(); ++k) {
            T* p = params_[k].value;
            const T* grad = params_[k].grad;
            T* buf = first_[k].data();
            for (std::size_t i = 0; i < params_[k].size(); ++i) {
                T g = wd != T(0) ? grad[i] + wd * p[i] : grad[i];
                if (momentum != T(0)) {
                    buf[i] = steps_ == 1 ? g : buf[i] * momentum + keep * g;
                    g = spec_.nesterov ? g + momentum * buf[i] : buf[i];
                }
                p[i] = p[i] + (-lr) * g;
            }
        }
        return;
    }
    const double t = static_cast<double>(steps_);
    AdamStep<T> step{};
    step.beta1 = static_cast<T>(spec_.beta1);
    step.beta2 = static_cast<T>(spec_.beta2);
    step.one_minus_beta1 = static_cast<T>(1 - spec_.beta1);
    step.one_minus_beta2 = static_cast<T>(1 - spec_.beta2);
    step.step_size = static_cast<T>(lr_d / (1 - math::pow(spec_.beta1, t)));
    step.bias_correction2_sqrt = static_cast<T>(std::sqrt(1 - math::pow(spec_.beta2, t)));
    step.eps = static_cast<T>(spec_.eps);
    step.decay = static_cast<T>(1 - lr_d * spec_.weight_decay);
    step.weight_decay = wd;
    step.decay_form = wd == T(0) ? 0 : spec_.kind == OptimizerKind::adamw ? 1 : 2;
    const kernels::AdamFamily& build = adam_builds().active();
    // A large tensor's update is split over gemm's threads (each value's
    // update is its own, so the split changes no bits); a small model's, or
    // one trained inside a sweep's task, stays on its thread.
    for (std::size_t k = 0; k < params_.size(); ++k) {
        T* const p = params_[k].value;
        const T* const g = params_[k].grad;
        T* const m = first_[k].data();
        T* const v = second_[k].data();
        gemm::parallel_ranges(params_[k].size(), kParallelMinValues, [&](std::size_t begin, std::size_t end) {
            if constexpr (sizeof(T) == 4) build.f32(step, begin, end, p, g, m, v);
            else build.f64(step, begin, end, p, g, m, v);
        });
    }
}

double learning_rate(const ScheduleSpec& s, double base_lr, long step, long total) {
    const double warm = s.warmup > 0 ? std::min(1.0, static_cast<double>(step + 1) / static_cast<double>(s.warmup)) : 1.0;
    switch (s.kind) {
        case ScheduleKind::constant: return base_lr;
        case ScheduleKind::warmup: return base_lr * warm;
        case ScheduleKind::cosine: break;
    }
    if (step < s.warmup) return base_lr * warm;
    const double span = static_cast<double>(std::max(1L, total - s.warmup));
    const double progress = std::min(1.0, static_cast<double>(step - s.warmup) / span);
    return s.min_lr + (base_lr - s.min_lr) * 0.5 * (1 + math::cos(std::numbers::pi * progress));
}

template class Optimizer<float>;
template class Optimizer<double>;

}  // namespace ffn::train
