// glu_variants: plain MLPs, the GLU family and doc 004's bilinear forms at
// one parameter budget, trained on two fixed synthetic regression tasks
// (claim S5; the empirical study doc 004 leaves open). Every model is a
// library module (MLP, GatedMLP, BilinearMLP) trained by train::fit with
// minibatch Adam; what varies between runs of one task is the model and the
// seed (its initialisation and its minibatch order), never the data.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>

#include "analysis/affine_fit.h"
#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "core/stats.h"
#include "experiments/glu_variants/glu_variants.h"
#include "experiments/support/made_once.h"
#include "experiments/support/plot.h"
#include "experiments/support/run.h"
#include "nn/init.h"
#include "nn/mlp.h"
#include "runner/experiment.h"
#include "train/fit.h"
#include "train/loss.h"

namespace ffn::experiments::glu_variants {

namespace {

using report::Cell;
using report::ColumnType;

const std::vector<std::string> kTasks = {"teacher", "products", "gelu_residual"};

// The baseline row of every task: the least-squares affine map from the
// training inputs to their targets (analysis::AffineFit), no training.
const std::string kAffine = "affine";

// Inputs on which gelu_residual's teacher has its affine part measured.
constexpr std::size_t kResidualFitRows = 16384;

// What a model's hidden unit costs in weights (no biases anywhere): the
// plain MLP's up and down rows, the gated MLP's gate, up and down rows, the
// rank-R form's R query rows, R key rows and one down row.
struct Shape {
    enum class Family { mlp, gated, form } family;
    nn::Activation activation;
    std::size_t rank = 0;
    std::size_t weights_per_unit(std::size_t d) const {
        switch (family) {
            case Family::mlp: return 2 * d;
            case Family::gated: return 3 * d;
            case Family::form: return (2 * rank + 1) * d;
        }
        return 0;
    }
};

Shape shape_of(const std::string& model, nn::Activation form_activation) {
    using F = Shape::Family;
    if (model == "mlp_relu") return {F::mlp, nn::Activation::relu};
    if (model == "mlp_gelu") return {F::mlp, nn::Activation::gelu};
    if (model == "form_rank1") return {F::form, form_activation, 1};
    if (model == "form_rank2") return {F::form, form_activation, 2};
    return {F::gated, nn::gated_variant_activation(model)};
}

template <class T>
std::unique_ptr<nn::Module<T>> build(const Shape& s, std::size_t d, std::size_t hidden) {
    switch (s.family) {
        case Shape::Family::mlp: return std::make_unique<nn::MLP<T>>(std::vector<std::size_t>{d, hidden, d}, s.activation, false);
        case Shape::Family::gated: return std::make_unique<nn::GatedMLP<T>>(d, hidden, s.activation);
        case Shape::Family::form: return std::make_unique<nn::BilinearMLP<T>>(d, hidden, s.rank, s.activation);
    }
    return nullptr;
}

template <class T>
struct Task {
    nn::Matrix<T> x_train, y_train, x_test, y_test;
    double test_variance = 0;  // mean over outputs of the test targets' variance
};

template <class T>
nn::Matrix<T> inputs(const runner::Run& run, std::size_t rows, const char* split) {
    const auto d = static_cast<std::size_t>(run.integer("d"));
    Rng rng = Rng::stream(static_cast<std::uint64_t>(run.integer("task_seed")), fnv1a64(std::string("glu_variants ") + split), "data");
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({rows, d});
    for (auto& x : X) x = static_cast<T>(rng.normal());
    return X;
}

// The targets of `task` for the rows of X. `teacher` is a d-w-d tanh MLP
// with biases in PyTorch's default init from the task's own stream: tanh so
// that no student shares its activation (it is about 97% affine). The
// products target is y_i = x_i x_{i+1 mod d}, one product of two inputs per
// output. `gelu_residual` is what a random d-w-d GELU MLP (first layer
// N(0, 1/d) weights and N(0, 1) biases, so its units bend inside the data;
// second layer PyTorch's default, no bias) computes beyond an affine map:
// the MLP minus its least-squares affine fit on 16384 inputs of its own.
template <class T>
nn::Matrix<T> targets(const runner::Run& run, const nn::Matrix<T>& X) {
    const std::size_t rows = X.shape()[0], d = X.shape()[1];
    const std::string task = run.string("task");
    if (task == "products") {
        nn::Matrix<T> Y = nn::Matrix<T>::from_shape({rows, d});
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t i = 0; i < d; ++i) Y(r, i) = X(r, i) * X(r, (i + 1) % d);
        return Y;
    }
    const auto w = static_cast<std::size_t>(run.integer("teacher_width"));
    const auto seed = static_cast<std::uint64_t>(run.integer("task_seed"));
    if (task == "teacher") {
        nn::MLP<T> teacher({d, w, d}, nn::Activation::tanh);
        Rng rng = Rng::stream(seed, fnv1a64("glu_variants teacher"), "init");
        nn::initialize(teacher, {nn::InitScheme::torch_default}, rng);
        return teacher.forward_with_hook(X);
    }
    nn::MLP<T> teacher({d, w, d}, nn::Activation::gelu);
    Rng rng = Rng::stream(seed, fnv1a64("glu_variants gelu_residual"), "init");
    nn::initialize(teacher, {nn::InitScheme::torch_default}, rng);
    for (auto& v : teacher.layers[0].weight) v = static_cast<T>(rng.normal() / std::sqrt(static_cast<double>(d)));
    for (auto& v : teacher.layers[0].bias) v = static_cast<T>(rng.normal());
    for (auto& v : teacher.layers[1].bias) v = T(0);
    const nn::Matrix<T> fit_inputs = inputs<T>(run, kResidualFitRows, "gelu_residual fit");
    const auto affine = analysis::fit_rows(fit_inputs, teacher.forward_with_hook(fit_inputs)).solve();
    nn::Matrix<T> Y = teacher.forward_with_hook(X);
    std::vector<double> x(d), a(d);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t i = 0; i < d; ++i) x[i] = static_cast<double>(X(r, i));
        affine.apply(x, a);
        for (std::size_t i = 0; i < d; ++i) Y(r, i) = static_cast<T>(static_cast<double>(Y(r, i)) - a[i]);
    }
    return Y;
}

template <class T>
Task<T> make_task(const runner::Run& run) {
    Task<T> t;
    t.x_train = inputs<T>(run, static_cast<std::size_t>(run.integer("train_tokens")), "train");
    t.x_test = inputs<T>(run, static_cast<std::size_t>(run.integer("test_tokens")), "test");
    t.y_train = targets(run, t.x_train);
    t.y_test = targets(run, t.x_test);
    t.test_variance = train::mean_column_variance(t.y_test);
    return t;
}

// Every run of a task trains on the same data: its inputs and targets
// depend on the values below alone, not on the model or the seed, so a
// process makes each task once (support/made_once.h; gelu_residual's two
// affine fits of 16384 rows and the teachers were a seventh of the
// config's time). It keeps the last four made, and no more than 64 MB of
// them but the newest (a sweep over task seeds or token counts would
// otherwise keep them all).
template <class T>
std::shared_ptr<const Task<T>> shared_task(const runner::Run& run) {
    // Every value make_task reads.
    const std::string key = fmt::format("{} d={} teacher_width={} task_seed={} train_tokens={} test_tokens={}", run.string("task"),
                                        run.integer("d"), run.integer("teacher_width"), run.integer("task_seed"),
                                        run.integer("train_tokens"), run.integer("test_tokens"));
    static MadeOnce<Task<T>> tasks(4, std::size_t{64} << 20, [](const Task<T>& t) {
        return (t.x_train.size() + t.y_train.size() + t.x_test.size() + t.y_test.size()) * sizeof(T);
    });
    return tasks.get(key, [&] { return make_task<T>(run); });
}

report::Table run_row(Cell hidden, std::int64_t params, Cell train_mse, Cell test_mse, Cell test_nmse, const std::string& status) {
    report::Table r("run");
    r.add_column("hidden", ColumnType::integer)
        .add_column("params", ColumnType::integer)
        .add_column("train_mse", ColumnType::real, 4)
        .add_column("test_mse", ColumnType::real, 4)
        .add_column("test_nmse", ColumnType::real, 4)
        .add_column("status", ColumnType::text);
    r.add_row({hidden, params, train_mse, test_mse, test_nmse, status});
    return r;
}

// The affine baseline: fitted in float64 on the training set, no seed in it.
template <class T>
std::vector<report::Table> fit_affine_baseline(const runner::Run& run, const Task<T>& task) {
    const auto d = static_cast<std::size_t>(run.integer("d"));
    const auto map = analysis::fit_rows(task.x_train, task.y_train).solve();
    const auto mse = [&](const nn::Matrix<T>& X, const nn::Matrix<T>& Y) {
        return analysis::residual_sum_of_squares(map, X, Y) / static_cast<double>(Y.size());
    };
    const double test_mse = mse(task.x_test, task.y_test);
    report::Table curve("curve");
    curve.add_column("step", ColumnType::integer).add_column("loss", ColumnType::real, 4);
    return {run_row(Cell{}, static_cast<std::int64_t>(d * d + d), mse(task.x_train, task.y_train), test_mse,
                    test_mse / task.test_variance, "fitted"),
            curve};
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const auto shared = shared_task<T>(run);
    const Task<T>& task = *shared;
    const std::string model_name = run.string("model");
    if (model_name == kAffine) return fit_affine_baseline(run, task);
    const auto d = static_cast<std::size_t>(run.integer("d"));
    const std::size_t hidden = hidden_width(model_name, d, static_cast<std::size_t>(run.integer("budget")));
    const auto model = build<T>(shape_of(model_name, nn::parse_activation(run.string("form_activation"))), d, hidden);
    Rng init = Rng::stream(run.seed, fnv1a64("glu_variants " + model_name), "init");
    nn::initialize(*model, {nn::InitScheme::torch_default}, init);

    train::Optimizer<T> opt(model->parameters(), {train::OptimizerKind::adam, run.number("lr")});
    train::FitSpec spec;
    spec.steps = run.integer("steps");
    spec.batch_size = run.integer("batch_size");
    spec.record_every = run.integer("log_every");
    Rng shuffle = Rng::stream(run.seed, 0, "shuffle");
    const train::FitRecord record = train::fit(*model, opt, task.x_train, task.y_train, spec, shuffle);
    const double test_mse = train::evaluate_loss(*model, task.x_test, task.y_test);
    const bool ok = record.status != "diverged" && std::isfinite(test_mse);

    report::Table r = run_row(static_cast<std::int64_t>(hidden), static_cast<std::int64_t>(nn::parameter_count(model->parameters())),
                              ok ? Cell{record.final_loss} : Cell{}, ok ? Cell{test_mse} : Cell{},
                              ok ? Cell{test_mse / task.test_variance} : Cell{}, record.status);
    report::Table curve("curve");
    curve.add_column("step", ColumnType::integer).add_column("loss", ColumnType::real, 4);
    for (const auto& [step, loss] : record.curve) curve.add_row({static_cast<std::int64_t>(step), std::isfinite(loss) ? Cell{loss} : Cell{}});
    return {r, curve};
}


struct Spread {
    Cell median, min, max;
};

Spread spread(std::vector<double> v) {
    if (v.empty()) return {};
    return {median(v), *std::min_element(v.begin(), v.end()), *std::max_element(v.begin(), v.end())};
}

// Per (swept point) over its seeds: the held-out error's median, min and
// max; and the training curves as the median and spread of the minibatch
// loss at each logged step. Every run's row stays in `runs`.
std::vector<report::Table> aggregate(runner::Aggregation& a) {
    const runner::Plan& plan = a.plan;
    const auto& per_run = a.per_run;
    report::Table runs = a.per_run_rows();

    report::Table t("variants");
    a.add_swept_columns(t);
    t.add_column("hidden", ColumnType::integer).add_column("params", ColumnType::integer).add_column("seeds", ColumnType::integer);
    for (const char* c : {"test_nmse_median", "test_nmse_min", "test_nmse_max", "test_mse_median", "train_mse_median"})
        t.add_column(c, ColumnType::real, 4);
    t.add_column("diverged", ColumnType::integer);
    // Against the task's affine baseline, and the models whose range over
    // seeds overlaps this one's: an order inside the seed spread is a tie.
    t.add_column("vs_affine", ColumnType::real, 3).add_column("ties", ColumnType::text);
    struct Ranked {
        std::size_t row;
        std::string model;
        Cell median, min, max;
    };
    std::map<std::string, std::vector<Ranked>> by_task;

    report::Table curves("curves");
    curves.set_long_form();
    a.add_swept_columns(curves);
    curves.add_column("step", ColumnType::integer);
    curves.add_key("step");
    for (const char* c : {"loss_median", "loss_min", "loss_max"}) curves.add_column(c, ColumnType::real, 4);

    for (const auto& group : a.seed_groups()) {
        std::vector<double> nmse, mse, train;
        std::int64_t diverged = 0;
        std::map<std::int64_t, std::vector<double>> at_step;
        for (std::size_t i : group) {
            const report::Table& r = per_run[i].front();
            if (const auto x = report::as_number(r.at(0, "test_nmse"))) nmse.push_back(*x);
            else ++diverged;
            if (const auto x = report::as_number(r.at(0, "test_mse"))) mse.push_back(*x);
            if (const auto x = report::as_number(r.at(0, "train_mse"))) train.push_back(*x);
            const report::Table& c = per_run[i][1];
            for (std::size_t k = 0; k < c.row_count(); ++k)
                if (const auto loss = report::as_number(c.at(k, "loss")))
                    at_step[static_cast<std::int64_t>(*report::as_number(c.at(k, "step")))].push_back(*loss);
        }
        const report::Table& first = per_run[group.front()].front();
        const Spread n = spread(nmse);
        auto cells = a.swept_cells(group.front());
        cells.insert(cells.end(), {first.at(0, "hidden"), first.at(0, "params"), static_cast<std::int64_t>(group.size()),
                                   n.median, n.min, n.max, spread(mse).median, spread(train).median, diverged, Cell{}, Cell{}});
        by_task[a.settings_key(group.front(), {"model"})].push_back({t.row_count(), plan.runs[group.front()].string("model"), n.median, n.min, n.max});
        t.add_row(std::move(cells));
        for (const auto& [step, losses] : at_step) {
            const Spread s = spread(losses);
            auto row = a.swept_cells(group.front());
            row.insert(row.end(), {step, s.median, s.min, s.max});
            curves.add_row(std::move(row));
        }
    }
    const std::size_t vs_affine = *t.find_column("vs_affine"), ties = *t.find_column("ties");
    for (const auto& [task, rows] : by_task) {
        const auto affine = std::find_if(rows.begin(), rows.end(), [](const Ranked& r) { return r.model == kAffine; });
        for (const Ranked& r : rows) {
            if (affine != rows.end() && r.model != kAffine)
                if (const auto a = report::as_number(affine->median), m = report::as_number(r.median); a && m && *a > 0)
                    t.set(r.row, vs_affine, *m / *a);
            std::string tied;
            for (const Ranked& o : rows) {
                const auto lo = report::as_number(r.min), hi = report::as_number(r.max);
                const auto olo = report::as_number(o.min), ohi = report::as_number(o.max);
                if (&o != &r && lo && hi && olo && ohi && *lo <= *ohi && *olo <= *hi) tied += (tied.empty() ? "" : ", ") + o.model;
            }
            t.set(r.row, ties, tied);
        }
    }
    return {t, curves, runs};
}

// --plot: per task, the median minibatch loss of each model against the
// step (log scale), one figure per task.
void plot_curves(const runner::Plan&, const std::vector<report::Table>& tables, const std::string& dir,
                 const runner::PlotChoice&) {
    std::filesystem::create_directories(dir);
    const report::Table& curves = plot::find_table(tables, "curves", "glu_variants");
    // Rows in grid order: consecutive rows of one (task, model) form a curve.
    std::map<std::string, std::vector<std::pair<std::string, std::vector<std::vector<double>>>>> by_task;
    for (std::size_t r = 0; r < curves.row_count(); ++r) {
        const std::string task = report::format_cell(curves.at(r, "task"), 0);
        const std::string model = report::format_cell(curves.at(r, "model"), 0);
        auto& list = by_task[task];
        if (list.empty() || list.back().first != model) list.push_back({model, {{}, {}}});
        list.back().second[0].push_back(*report::as_number(curves.at(r, "step")));
        const auto loss = report::as_number(curves.at(r, "loss_median"));
        list.back().second[1].push_back(loss ? *loss : std::nan(""));
    }
    for (const auto& [task, list] : by_task) {
        std::string script = plot::header("glu_variants, task " + task + ": median minibatch loss over seeds", "step", "MSE") +
                             "set logscale y\n";
        std::string plots = "plot";
        for (std::size_t i = 0; i < list.size(); ++i) {
            script += plot::data_block(fmt::format("c{}", i), list[i].second);
            plots += fmt::format("{} $c{} using 1:2 with lines lw 2 title '{}'", i ? "," : "", i, plot::plain_title(list[i].first));
        }
        plot::render(script + plots + "\n", (std::filesystem::path(dir) / ("curves_" + task + ".svg")).string());
    }
}

}  // namespace

const std::vector<std::string>& model_names() {
    static const std::vector<std::string> names = {kAffine,  "mlp_relu", "mlp_gelu", "glu",        "reglu",    "geglu",
                                                   "swiglu", "bilinear", "form_rank1", "form_rank2"};
    return names;
}

std::size_t hidden_width(const std::string& model, std::size_t d, std::size_t budget) {
    const std::size_t per_unit = shape_of(model, nn::Activation::identity).weights_per_unit(d);
    return budget / per_unit;
}

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    schema.add({.path = "task", .type = KeyType::string, .default_value = "teacher", .choices = kTasks,
                .help = "teacher: a random d-w-d tanh MLP; products: y_i = x_i x_(i+1 mod d); gelu_residual: a random GELU MLP less its best affine fit"});
    schema.add({.path = "model", .type = KeyType::string, .default_value = "swiglu", .choices = model_names(),
                .help = "the block trained (sweep it); affine: the least-squares affine map, fitted, not trained"});
    schema.add({.path = "d", .type = KeyType::integer, .default_value = 32, .min = 2.0, .max = 1024.0,
                .help = "input and output width"});
    schema.add({.path = "budget", .type = KeyType::integer, .default_value = 8192, .min = 1.0, .max = 1e7,
                .help = "weights per model; each takes the most hidden units that fit (no biases)"});
    schema.add({.path = "form_activation", .type = KeyType::string, .default_value = "gelu", .choices = nn::activation_names(),
                .help = "the activation of doc 004's rank-1 and rank-2 forms"});
    schema.add({.path = "teacher_width", .type = KeyType::integer, .default_value = 64, .min = 1.0, .max = 4096.0,
                .help = "hidden units of the teacher MLP"});
    schema.add({.path = "task_seed", .type = KeyType::integer, .default_value = 0, .min = 0.0,
                .help = "fixes the task (inputs and teacher) for every run and seed"});
    schema.add({.path = "train_tokens", .type = KeyType::integer, .default_value = 2048, .min = 1.0, .max = 1e6,
                .help = "training inputs ~ N(0, 1)"});
    schema.add({.path = "test_tokens", .type = KeyType::integer, .default_value = 1024, .min = 1.0, .max = 1e6,
                .help = "held-out inputs ~ N(0, 1)"});
    schema.add({.path = "steps", .type = KeyType::integer, .default_value = 1500, .min = 0.0, .max = 1e7, .help = "Adam steps"});
    schema.add({.path = "batch_size", .type = KeyType::integer, .default_value = 128, .min = 0.0, .max = 1e6,
                .help = "minibatch rows (0: full batch)"});
    schema.add({.path = "lr", .type = KeyType::number, .default_value = 3e-3, .min = 0.0, .help = "Adam's learning rate"});
    schema.add({.path = "log_every", .type = KeyType::integer, .default_value = 100, .min = 1.0,
                .help = "steps between the points of the training curves"});
    schema.add({.path = "dtype", .type = KeyType::string, .default_value = "float32", .choices = {"float32", "float64"},
                .help = "scalar type of training"});
    return {.name = "glu_variants",
            .description = "MLPs, GLU variants and bilinear forms at one parameter budget on three synthetic tasks, beside the best affine map",
            .schema = std::move(schema),
            .headlines = {{"variants", {"task", "model", "params", "test_nmse_median", "vs_affine", "ties"}}},
            .validate =
                [](const runner::Plan& plan) {
                    for (const runner::Run* r : plan.first_run_of_each_point())
                        if (r->string("model") != kAffine && hidden_width(r->string("model"), static_cast<std::size_t>(r->integer("d")),
                                         static_cast<std::size_t>(r->integer("budget"))) == 0)
                            throw Error(fmt::format("key 'budget': {} weights buy no hidden unit of '{}' at d = {}",
                                                    r->integer("budget"), r->string("model"), r->integer("d")));
                    // The largest of the step's activations: rows x hidden
                    // matrices, about ten for the rank-2 form, plus the data.
                    refuse_runs_beyond_memory(plan, {"budget", "train_tokens", "test_tokens", "d"}, [](const runner::Run& r) {
                        const double d = static_cast<double>(r.integer("d"));
                        const double rows = static_cast<double>(std::max(r.integer("train_tokens"), r.integer("test_tokens")));
                        const double hidden = static_cast<double>(r.integer("budget")) / (3 * d);
                        return (10 * rows * hidden + 6 * rows * d + 4 * static_cast<double>(r.integer("budget"))) * (r.is_float64() ? 8 : 4);
                    });
                },
            .run = by_dtype<compute<float>, compute<double>>,
            .aggregate = aggregate,
            .plot = plot_curves,
            // A trained block: steps x minibatch rows x its weights, forward
            // and backward; the affine baseline is one least-squares fit.
            .cost = [](const runner::Run& r) {
                const double rows = static_cast<double>(std::min(r.integer("batch_size") > 0 ? r.integer("batch_size") : r.integer("train_tokens"),
                                                                  r.integer("train_tokens")));
                if (r.string("model") == "affine")
                    return static_cast<double>(r.integer("train_tokens")) * static_cast<double>(r.integer("d") * r.integer("d"));
                return static_cast<double>(r.integer("steps")) * rows * static_cast<double>(r.integer("budget"));
            }};
}

}  // namespace ffn::experiments::glu_variants
