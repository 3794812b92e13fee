#include "bench/tms_bench.h"

#include <cmath>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "bench/timing.h"
#include "core/error.h"
#include "core/isa.h"
#include "core/rng.h"
#include "core/stats.h"
#include "core/thread_pool.h"
#include "train/toy_model.h"
#include "report/text.h"

namespace ffn::bench {

namespace {

namespace toy_model = train::toy_model;

struct Shape {
    std::size_t n, m, batch, models;
    long steps;  // the config's, for models per second
    double density, importance_decay, lr;
    std::string spec() const { return fmt::format("{}:{}:{}:{}", n, m, batch, models); }
};

Shape shape_of(const std::string& config, const runner::Plan& plan) {
    if (plan.kind->name != "toy_superposition")
        throw Error(config + ": bench tms times toy_superposition configs, not '" + plan.kind->name + "'");
    const runner::Run& r = plan.runs.front();
    return {static_cast<std::size_t>(r.integer("features")), static_cast<std::size_t>(r.integer("hidden")),
            static_cast<std::size_t>(r.integer("batch_size")), plan.runs.size(), r.integer("steps"),
            1 - r.number("sparsity"), r.number("importance_decay"), r.number("lr")};
}

// The config's models as stacks of at most the kind's batch size (as the
// runner hands them out), as many stacks as keep every thread busy.
std::vector<std::unique_ptr<toy_model::Stack<float>>> stacks_of(const Shape& s, std::size_t most, std::size_t threads) {
    const std::size_t count = threads * ((s.models + threads * most - 1) / (threads * most));
    std::vector<double> importance(s.n);
    for (std::size_t i = 0; i < s.n; ++i) importance[i] = std::pow(s.importance_decay, static_cast<double>(i));
    Rng init = Rng::stream(0, 0, "bench-init");
    std::vector<std::unique_ptr<toy_model::Stack<float>>> out;
    for (std::size_t k = 0, given = 0; k < count; ++k) {
        const std::size_t size = (s.models - given) / (count - k);  // as equal as they come
        if (size == 0) continue;
        std::vector<float> W(size * s.m * s.n);
        for (float& w : W) w = static_cast<float>(std::sqrt(2.0 / static_cast<double>(s.n + s.m)) * init.normal());
        std::vector<std::uint64_t> keys(size);
        for (auto& key : keys) key = init.next_u64();
        out.push_back(std::make_unique<toy_model::Stack<float>>(toy_model::Shape{s.n, s.m, s.batch, size}, std::move(keys),
                                                                std::move(W), s.density, importance, s.lr));
        given += size;
    }
    return out;
}

// PyTorch's microseconds per model and step, by shape spec.
std::map<std::string, double> torch_times(const std::vector<Shape>& shapes, const TmsBenchOptions& o, std::size_t threads,
                                          std::string* about) {
    std::vector<std::string> args = {"tms", std::to_string(threads), std::to_string(o.batch_seconds), std::to_string(o.repeats)};
    for (const Shape& s : shapes) args.push_back(s.spec());
    TorchSession torch(o.python, args, threads);
    std::map<std::string, double> out;
    for (const io::Json& record : torch.all_records())
        if (number_field(record, "us_per_model_step") > 0) out[text_field(record, "shape")] = number_field(record, "us_per_model_step");
    *about = torch.about();
    return out;
}

}  // namespace

report::Table bench_tms(const std::vector<std::pair<std::string, runner::Plan>>& plans, const TmsBenchOptions& o,
                        std::string* torch_about) {
    std::vector<Shape> shapes;
    for (const auto& [config, plan] : plans) shapes.push_back(shape_of(config, plan));
    report::Table t("tms");
    t.add_column("config", report::ColumnType::text)
        .add_column("n", report::ColumnType::integer)
        .add_column("m", report::ColumnType::integer)
        .add_column("batch", report::ColumnType::integer)
        .add_column("models", report::ColumnType::integer)
        .add_column("engine", report::ColumnType::text)
        .add_column("threads", report::ColumnType::integer)
        .add_column("isa", report::ColumnType::text)
        .add_column("us_per_model_step", report::ColumnType::real, 4, true)
        .add_column("models_per_s", report::ColumnType::real, 4, true)  // at the config's steps
        .add_column("torch_us_per_model_step", report::ColumnType::real, 4, true)
        .add_column("vs_torch", report::ColumnType::real, 4, true);  // PyTorch's time over ours: above 1, ffn-lab is faster
    for (std::size_t threads : o.threads) {
        std::string about;
        const std::map<std::string, double> torch = torch_times(shapes, o, threads, &about);
        if (torch_about->empty()) *torch_about = about;
        else if (torch_about->find(about) == std::string::npos) *torch_about += "; on " + report::counted(threads, "thread") + ": " + about;
        ThreadPool pool(threads);
        for (std::size_t c = 0; c < plans.size(); ++c) {
            const Shape& s = shapes[c];
            auto stacks = stacks_of(s, plans[c].second.kind->batch_runs, threads);
            // Ten steps of every stack a call, each stack on one thread for
            // all ten, as the runner gives a thread a whole run.
            constexpr int kSteps = 10;
            const double call = median_seconds_per_call(
                [&] { pool.parallel_for(stacks.size(), [&](std::size_t k) { for (int i = 0; i < kSteps; ++i) stacks[k]->step(); }); },
                o.repeats, o.batch_seconds);
            const double us = call / (kSteps * static_cast<double>(s.models)) * 1e6;
            const auto theirs = torch.find(s.spec());
            const bool have = theirs != torch.end();
            t.add_row({plans[c].first, static_cast<std::int64_t>(s.n), static_cast<std::int64_t>(s.m), static_cast<std::int64_t>(s.batch),
                       static_cast<std::int64_t>(s.models),
                       std::string(toy_model::fits_fused({s.n, s.m, s.batch}) ? "fused" : "products"),
                       static_cast<std::int64_t>(threads), std::string(isa_name(active_isa())), us,
                       1e6 / (us * static_cast<double>(s.steps)), have ? report::Cell{theirs->second} : report::Cell{},
                       have ? report::Cell{theirs->second / us} : report::Cell{}});
        }
    }
    return t;
}

}  // namespace ffn::bench
