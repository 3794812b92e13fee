#pragma once
// The planted-feature task and its trained MLP, shared by planted_features
// (what training does to the units) and unit_contrast (choosing units on
// discovery inputs and confirming them on held-out ones): the same keys
// give the same directions, data and model bits in both kinds.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "experiments/support/made_once.h"
#include "experiments/support/run.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "runner/experiment.h"
#include "train/fit.h"
#include "train/loss.h"

namespace ffn::experiments::planted {

inline const std::vector<std::string>& target_names() {
    static const std::vector<std::string> names = {"abs", "strength"};
    return names;
}

// The task's keys, the model's and its training's.
inline void add_keys(runner::Schema& schema) {
    using runner::KeyType;
    schema.add({.path = "d", .type = KeyType::integer, .default_value = 20, .min = 2.0, .max = 1024.0,
                .help = "input and output width"});
    schema.add({.path = "features", .type = KeyType::integer, .default_value = 40, .min = 1.0, .max = 4096.0,
                .help = "planted unit directions in R^d (more than d: superposition)"});
    schema.add({.path = "density", .type = KeyType::number, .default_value = 0.05, .min = 0.0, .max = 1.0,
                .help = "probability that a feature is present in an input (above 0)"});
    schema.add({.path = "target", .type = KeyType::string, .default_value = "abs", .choices = target_names(),
                .help = "abs: sum_i |s_i| f_i (a nonlinearity per feature); strength: sum_i s_i f_i, the input itself"});
    schema.add({.path = "m", .type = KeyType::integer, .default_value = 80, .min = 1.0, .max = 16384.0,
                .help = "hidden units"});
    schema.add({.path = "activation", .type = KeyType::string, .default_value = "relu", .choices = nn::activation_names(),
                .help = "the hidden layer's activation"});
    schema.add({.path = "train_samples", .type = KeyType::integer, .default_value = 8192, .min = 1.0, .max = 1e6,
                .help = "training inputs"});
    schema.add({.path = "probe_samples", .type = KeyType::integer, .default_value = 4096, .min = 2.0, .max = 1e6,
                .help = "held-out inputs on which units fire and the fit is scored"});
    schema.add({.path = "steps", .type = KeyType::integer, .default_value = 4000, .min = 0.0, .max = 1e7, .help = "Adam steps"});
    schema.add({.path = "batch_size", .type = KeyType::integer, .default_value = 256, .min = 0.0, .max = 1e6,
                .help = "minibatch rows (0: full batch)"});
    schema.add({.path = "lr", .type = KeyType::number, .default_value = 3e-3, .min = 0.0, .help = "Adam's learning rate"});
    schema.add({.path = "dtype", .type = KeyType::string, .default_value = "float32", .choices = {"float32", "float64"},
                .help = "scalar type of training"});
}

template <class T>
struct Task {
    std::vector<std::vector<double>> directions;  // n unit vectors in R^d
    nn::Matrix<T> x_train, y_train, x_probe, y_probe;
    bool abs_target = true;
    double density = 0;
};

// A feature a draw holds or leaves out whatever `density` says: present at
// a strength of 0.5 to 1 either way (clearly there), or absent.
struct Forced {
    std::size_t feature;
    bool present;
};

// Rows of sparse feature combinations: feature i is present with
// probability `density`, with a strength s ~ U[-1, 1]; the input is
// sum_i s_i f_i, the target sum_i g(s_i) f_i with g = |.| ("abs", a
// nonlinearity per feature the MLP must compute) or the identity
// ("strength", a linear map that asks no unit to pick a feature).
template <class T>
void draw_rows(const Task<T>& task, Rng& rng, std::size_t rows, nn::Matrix<T>& x, nn::Matrix<T>& y,
               std::optional<Forced> forced = {}) {
    const auto& f = task.directions;
    const std::size_t d = f.front().size();
    x = nn::Matrix<T>::from_shape({rows, d});
    y = nn::Matrix<T>::from_shape({rows, d});
    std::vector<double> xr(d), yr(d);
    for (std::size_t r = 0; r < rows; ++r) {
        std::fill(xr.begin(), xr.end(), 0.0);
        std::fill(yr.begin(), yr.end(), 0.0);
        for (std::size_t i = 0; i < f.size(); ++i) {
            double s;
            if (forced && forced->feature == i) {
                if (!forced->present) continue;
                s = rng.uniform(0.5, 1.0) * (rng.uniform01() < 0.5 ? -1.0 : 1.0);
            } else {
                if (rng.uniform01() >= task.density) continue;
                s = rng.uniform(-1.0, 1.0);
            }
            const double g = task.abs_target ? std::abs(s) : s;
            for (std::size_t k = 0; k < d; ++k) {
                xr[k] += s * f[i][k];
                yr[k] += g * f[i][k];
            }
        }
        for (std::size_t k = 0; k < d; ++k) {
            x.data()[r * d + k] = static_cast<T>(xr[k]);
            y.data()[r * d + k] = static_cast<T>(yr[k]);
        }
    }
}

// What names the task's streams: its keys, not the model's (relu and gelu
// runs of one seed see the same task).
inline std::string task_name(const runner::Run& run) {
    return fmt::format("planted d={} features={} density={} target={}", run.integer("d"), run.integer("features"),
                       run.number("density"), run.string("target"));
}

// The directions and the training and probe data, from the run's seed.
template <class T>
Task<T> make_task(const runner::Run& run) {
    const auto d = static_cast<std::size_t>(run.integer("d")), n = static_cast<std::size_t>(run.integer("features"));
    Task<T> task;
    task.abs_target = run.string("target") == "abs";
    task.density = run.number("density");
    Rng dir = Rng::stream(run.seed, fnv1a64(fmt::format("planted d={} features={}", d, n)), "directions");
    task.directions.assign(n, std::vector<double>(d));
    for (auto& fi : task.directions) {
        double norm = 0;
        for (auto& v : fi) {
            v = dir.normal();
            norm += v * v;
        }
        // A zero draw has probability 0; the guard keeps the division defined.
        norm = std::sqrt(std::max(norm, 1e-300));
        for (auto& v : fi) v /= norm;
    }
    Rng data = Rng::stream(run.seed, fnv1a64(task_name(run)), "data");
    draw_rows(task, data, static_cast<std::size_t>(run.integer("train_samples")), task.x_train, task.y_train);
    draw_rows(task, data, static_cast<std::size_t>(run.integer("probe_samples")), task.x_probe, task.y_probe);
    return task;
}

// The d-m-d MLP in PyTorch's default init, from a stream named by its shape.
template <class T>
nn::MLP<T> make_model(const runner::Run& run) {
    const auto d = static_cast<std::size_t>(run.integer("d")), m = static_cast<std::size_t>(run.integer("m"));
    nn::MLP<T> mlp({d, m, d}, nn::parse_activation(run.string("activation")));
    Rng init = Rng::stream(run.seed, fnv1a64(fmt::format("planted d={} m={}", d, m)), "init");
    nn::initialize(mlp, {nn::InitScheme::torch_default}, init);
    return mlp;
}

// Minibatch Adam on the training data, MSE.
template <class T>
train::FitRecord train_model(const runner::Run& run, nn::MLP<T>& mlp, const Task<T>& task) {
    train::Optimizer<T> opt(mlp.parameters(), {train::OptimizerKind::adam, run.number("lr")});
    train::FitSpec spec;
    spec.steps = run.integer("steps");
    spec.batch_size = run.integer("batch_size");
    spec.record_every = std::max<long>(1, spec.steps);
    Rng shuffle = Rng::stream(run.seed, 0, "shuffle");
    return train::fit(mlp, opt, task.x_train, task.y_train, spec, shuffle);
}

// How well a trained model does on the probe inputs: the MSE over the
// target's variance per coordinate (1: predicting each coordinate's mean,
// 0: a perfect fit). Usable: training did not diverge and the score is a
// number; learned: usable and better than the mean.
struct Fit {
    bool usable = false, learned = false;
    double nmse = 0;
};
template <class T>
Fit score(nn::MLP<T>& mlp, const Task<T>& task, const train::FitRecord& record) {
    const double mse = train::evaluate_loss(mlp, task.x_probe, task.y_probe), var = train::mean_column_variance(task.y_probe);
    Fit f;
    f.usable = record.status != "diverged" && std::isfinite(mse) && var > 0;
    f.nmse = f.usable ? mse / var : 0.0;
    f.learned = f.usable && f.nmse < 1;
    return f;
}

// A task with its model trained, as the runs that share them use them.
template <class T>
struct Trained {
    Task<T> task;
    nn::MLP<T> mlp;
    train::FitRecord record;
    Fit fit;
};

// The runs of a seed that differ only in how they read the trained model
// (unit_contrast's groups, group sizes, permutations...) train the same
// model, the same bits: a process trains each once (support/made_once.h;
// unit_contrast's 80 runs trained 20 models, each four times, and the
// training was most of its time). The key is every value make_task,
// make_model and train_model read; the newest models are kept, their data
// and weights up to 128 MB (for each dtype).
template <class T>
std::shared_ptr<const Trained<T>> shared_training(const runner::Run& run) {
    const std::string key =
        fmt::format("seed {}: d={} m={} features={} density={} target={} activation={} train_samples={} probe_samples={} lr={} "
                    "steps={} batch_size={}",
                    run.seed, run.integer("d"), run.integer("m"), run.integer("features"), run.number("density"),
                    run.string("target"), run.string("activation"), run.integer("train_samples"), run.integer("probe_samples"),
                    run.number("lr"), run.integer("steps"), run.integer("batch_size"));
    static MadeOnce<Trained<T>> trained(SIZE_MAX, std::size_t{128} << 20, [](const Trained<T>& t) {
        std::size_t values = t.task.x_train.size() + t.task.y_train.size() + t.task.x_probe.size() + t.task.y_probe.size();
        for (const auto& layer : t.mlp.layers) values += 2 * (layer.weight.size() + layer.bias.size());  // and their gradients
        return values * sizeof(T);
    });
    return trained.get(key, [&] {
        Trained<T> t{make_task<T>(run), make_model<T>(run), {}, {}};
        t.record = train_model(run, t.mlp, t.task);
        t.fit = score(t.mlp, t.task, t.record);
        // Kept: the weights, not the activations of the last pass (the
        // probe inputs through every layer, many times the weights).
        nn::MLP<T> weights_only({t.mlp.layers.front().in_features(), t.mlp.layers.front().out_features(),
                                 t.mlp.layers.back().out_features()},
                                t.mlp.activation);
        for (std::size_t l = 0; l < weights_only.layers.size(); ++l) {
            weights_only.layers[l].weight = t.mlp.layers[l].weight;
            weights_only.layers[l].bias = t.mlp.layers[l].bias;
        }
        t.mlp = std::move(weights_only);
        return t;
    });
}

// The validate hook's part for the task: a density that plants nothing,
// and runs beyond memory (the data, two matrices of rows x d per split,
// the step's rows x m activations, the one-feature probes), plus `extra`
// rows of d and m a kind draws besides.
inline void refuse_bad_tasks(const runner::Plan& plan, const std::function<double(const runner::Run&)>& extra_rows = {}) {
    for (const runner::Run* r : plan.first_run_of_each_point())
        if (r->number("density") == 0) throw Error("key 'density': 0 plants no feature in any input; it must be above 0");
    refuse_runs_beyond_memory(plan, {"train_samples", "probe_samples", "d", "m", "features"}, [&](const runner::Run& r) {
        const double d = static_cast<double>(r.integer("d")), m = static_cast<double>(r.integer("m"));
        const double rows = static_cast<double>(r.integer("train_samples") + r.integer("probe_samples")) +
                            (extra_rows ? extra_rows(r) : 0.0);
        const double n = static_cast<double>(r.integer("features"));
        return (4 * rows * d + 4 * rows * m + 3 * n * (d + m) + 8 * d * m) * (r.is_float64() ? 8 : 4);
    });
}

// Steps x minibatch rows x the weights, for the scheduler.
inline double training_cost(const runner::Run& r) {
    const double rows = static_cast<double>(r.integer("batch_size") > 0 ? std::min(r.integer("batch_size"), r.integer("train_samples"))
                                                                         : r.integer("train_samples"));
    return static_cast<double>(r.integer("steps")) * rows * static_cast<double>(r.integer("d") * r.integer("m"));
}

}  // namespace ffn::experiments::planted
