#include "experiments/width_sweep/live.h"

#include <cmath>
#include <set>

#include "analysis/kinks.h"
#include "core/error.h"
#include "experiments/registry.h"
#include "experiments/width_sweep/page.h"
#include "nn/activation.h"

namespace ffn::experiments::width_sweep {

using namespace std::chrono_literals;

namespace {

// How often a running session draws: 25 states a second at most. A state
// goes out at the first step past the interval, at the pace of 250 steps a
// second up to 4 ms late: 50 ms gave 17-19 a second where the issue asks
// for 20 or more.
constexpr auto kStateInterval = 40ms;

runner::Json protocol_defaults() {
    // configs/width.json's protocol, one seed: what document 002's figure
    // and document 001's table train.
    return {{"experiment", "width_sweep"},
            {"description", "A run of the ffn-lab serve page: a 1-m-1 net fitted to a curve"},
            {"target", "sin(3*x)"},
            {"interval", {-2, 2}},
            {"samples", 400},
            {"model", {{"width", 8}}},
            {"activation", "relu"},
            {"init", "kinks_inside"},
            {"optimizer", "adam"},
            {"lr", 0.001},
            {"steps", 5000},
            {"dtype", "float32"},
            {"seeds", {0}}};
}

// The schema checks the type; the page's own bound comes on top.
void check_at_most(const char* key, const Json& value, long most) {
    if (value.is_number_integer() && value.get<long long>() > most)
        throw Error(std::string("key '") + key + "': at most " + std::to_string(most) + " on the page (" + value.dump() +
                    " given); `ffn-lab sweep` takes more");
}

}  // namespace

Json live_config(const Json& page) {
    if (!page.is_object()) throw Error("the request: expected a JSON object of parameters");
    static const std::set<std::string> keys = {"target", "points", "interval", "samples", "model.width", "activation", "init",
                                               "optimizer", "lr", "steps", "seed", "units"};
    runner::Json config = protocol_defaults();
    for (const auto& [key, value] : page.items()) {
        if (!keys.contains(key)) {
            std::string known;
            for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k;
            throw Error("unknown key '" + key + "' (the page takes " + known + ")");
        }
        if (key == "units") {
            if (!value.is_boolean()) throw Error("key 'units': expected true or false, got " + value.dump());
            continue;
        }
        if (key == "seed") {
            if (!value.is_number_integer() || value.get<long long>() < 0)
                throw Error("key 'seed': expected an integer >= 0, got " + value.dump());
            config["seeds"] = runner::Json::array({value});
        } else if (key == "model.width") {
            check_at_most("model.width", value, kMaxWidth);
            config["model"]["width"] = runner::Json::parse(value.dump());
        } else {
            if (key == "samples") check_at_most("samples", value, kMaxSamples);
            if (key == "points" && value.is_array() && value.size() > static_cast<std::size_t>(kMaxSamples))
                throw Error("key 'points': at most " + std::to_string(kMaxSamples) + " on the page (" + std::to_string(value.size()) +
                            " given); `ffn-lab sweep` takes more");
            if (key == "steps") check_at_most("steps", value, kMaxSteps);
            config[key] = runner::Json::parse(value.dump());
        }
    }
    // The schema's checks, in the CLI's words: types, ranges, choices.
    const runner::Plan plan = runner::make_plan(config, "the page", {}, experiments::all_kinds());
    make_fit_data(plan.runs.front());  // the interval and the target's expression
    return config;
}

LiveFit::LiveFit(const Json& config, bool units, double steps_per_second)
    : config_(config),
      plan_(runner::make_plan(config, "the page", {}, experiments::all_kinds())),
      data_(make_fit_data(plan_.runs.front())),
      steps_per_second_(steps_per_second),
      units_(units) {
    const runner::Run& run = plan_.runs.front();
    steps_ = run.integer("steps");
    piecewise_linear_ = nn::is_piecewise_linear(nn::parse_activation(run.string("activation")));
    const auto target = target_curve(run, data_);  // NaN, a gap, where it has no value
    std::vector<double> on_grid;
    for (std::size_t k = 0; k < kGridPoints; ++k) {
        grid_.push_back(data_.lo + (data_.hi - data_.lo) * static_cast<double>(k) / static_cast<double>(kGridPoints - 1));
        on_grid.push_back(target(grid_.back()));
    }
    setup_ = Json{{"kind", "setup"},
                  {"x", grid_},
                  {"target", on_grid},
                  {"samples_x", data_.x},
                  {"samples_y", data_.y},
                  {"interval", {data_.lo, data_.hi}},
                  {"activation", run.string("activation")},
                  {"piecewise_linear", piecewise_linear_},
                  {"steps", steps_}}
                 .dump();
    thread_ = std::thread([this] { run_training(); });
}

LiveFit::~LiveFit() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
}

void LiveFit::publish(long step, double loss, const FittedNet& net, const std::string& status, const std::string& message) {
    Json s = {{"kind", "state"}, {"step", step}, {"steps", steps_}, {"status", status}};
    s["loss"] = std::isfinite(loss) ? Json(loss) : Json(nullptr);
    s["rmse"] = std::isfinite(net.rmse) ? Json(net.rmse) : Json(nullptr);
    std::vector<double> y;
    for (double x : grid_) y.push_back(net.at(x));
    s["y"] = y;
    s["c"] = net.c;
    s["w"] = net.w;
    s["b"] = net.b;
    s["v"] = net.v;
    if (piecewise_linear_) {
        s["kinks"] = analysis::kinks_inside(net.w, net.b, data_.lo, data_.hi);
        std::vector<double> at;
        for (std::size_t j = 0; j < net.w.size(); ++j) {
            const double k = analysis::kink_at(net.w[j], net.b[j]);
            if (k > data_.lo && k < data_.hi) at.push_back(k);
        }
        s["kink_x"] = at;
    } else {
        s["kinks"] = nullptr;
    }
    if (units_) {
        Json units = Json::array();
        for (std::size_t j = 0; j < net.w.size(); ++j) {
            std::vector<double> u;
            for (double x : grid_) u.push_back(net.unit(j, x));
            units.push_back(u);
        }
        s["units"] = units;
    }
    if (!message.empty()) s["message"] = message;
    state_ = s.dump();
    ++state_number_;
    last_state_time_ = std::chrono::steady_clock::now();
    changed_.notify_all();
}

void LiveFit::run_training() {
    const runner::Run& run = plan_.runs.front();
    // A loss point every so many steps: a thousand or so in all.
    const long curve_every = std::max(1L, steps_ / 1000);
    double last_loss = std::nan("");
    try {
        const FittedNet final_net = fit_watched(run, data_, [&](long step, double loss, const std::function<FittedNet()>& net) {
            std::unique_lock lock(mutex_);
            step_ = step;
            if (step > 0) last_loss = loss;
            if (stop_) return false;
            if (step > 0 && !std::isfinite(loss)) return false;  // diverged: training ends, the last state says so
            if (step > 0 && (step % curve_every == 0 || step == steps_)) curve_.emplace_back(step, loss);
            if (step >= steps_) return true;  // the last step: the final state follows
            if (step < target_ && std::chrono::steady_clock::now() - last_state_time_ >= kStateInterval)
                publish(step, loss, net(), "running");
            if (paced_ && step < target_) {
                const auto due = paced_from_ + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                   std::chrono::duration<double>(double(step + 1 - paced_from_step_) / steps_per_second_));
                changed_.wait_until(lock, due, [&] { return stop_ || !paced_ || step_ >= target_; });
            }
            if (step_ >= target_ && !stop_) {
                publish(step, loss, net(), "paused");
                while (!stop_ && step_ >= target_) {
                    changed_.wait(lock, [&] { return stop_ || step_ < target_ || redraw_; });
                    if (redraw_ && !stop_ && step_ >= target_) publish(step, loss, net(), "paused");
                    redraw_ = false;
                }
            }
            return !stop_;
        });
        std::lock_guard lock(mutex_);
        step_ = final_net.steps;
        final_net_ = final_net;
        final_step_ = final_net.steps;
        final_loss_ = last_loss;
        final_status_ = final_net.status == "ok" ? "done" : final_net.status;
        if (final_net.status == "diverged")
            final_message_ = "diverged at step " + std::to_string(final_net.steps) +
                             ": the loss is not finite; a lower learning rate trains this net";
        publish(final_step_, final_loss_, *final_net_, final_status_, final_message_);
    } catch (const std::exception& e) {
        std::lock_guard lock(mutex_);
        Json s = {{"kind", "state"}, {"step", step_}, {"steps", steps_}, {"status", "error"}, {"message", e.what()}};
        state_ = s.dump(-1, ' ', false, Json::error_handler_t::replace);
        ++state_number_;
        changed_.notify_all();
    }
}

std::string LiveFit::setup() const { return setup_; }

std::optional<std::pair<std::uint64_t, std::string>> LiveFit::next_state(std::uint64_t seen, std::size_t& curve_sent,
                                                                         std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return state_number_ > seen || stop_; });
    if (state_number_ <= seen) return std::nullopt;
    // The loss points this listener has not had, spliced into the state.
    Json curve = Json::array();
    for (; curve_sent < curve_.size(); ++curve_sent) curve.push_back({curve_[curve_sent].first, curve_[curve_sent].second});
    std::string text = state_;
    text.pop_back();
    text += ",\"curve\":" + curve.dump() + "}";
    return std::make_pair(state_number_, text);
}

void LiveFit::train() {
    std::lock_guard lock(mutex_);
    paced_ = true;
    paced_from_ = std::chrono::steady_clock::now();
    paced_from_step_ = step_;
    target_ = steps_;
    changed_.notify_all();
}

void LiveFit::pause() {
    std::lock_guard lock(mutex_);
    paced_ = false;
    target_ = step_;
    changed_.notify_all();
}

void LiveFit::step(long count) {
    std::lock_guard lock(mutex_);
    paced_ = false;
    target_ = std::min(steps_, step_ + std::max(1L, count));
    changed_.notify_all();
}

void LiveFit::advance(long to_step) {
    std::lock_guard lock(mutex_);
    paced_ = false;
    target_ = std::clamp(to_step, step_, steps_);
    changed_.notify_all();
}

void LiveFit::show_units(bool on) {
    std::lock_guard lock(mutex_);
    units_ = on;
    if (final_net_) publish(final_step_, final_loss_, *final_net_, final_status_, final_message_);  // training is over: drawn here
    else redraw_ = true;  // a paused net is drawn again by its thread, with or without them
    changed_.notify_all();
}

void LiveFit::close() {
    {
        std::lock_guard lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
}

bool LiveFit::closed() const {
    std::lock_guard lock(mutex_);
    return stop_;
}

Json LiveFit::config(std::optional<long> at_step) const {
    Json config = config_;
    if (at_step) {
        if (*at_step < 0 || *at_step > steps_) throw Error("'at': expected a step from 0 to " + std::to_string(steps_));
        config["steps"] = *at_step;
    }
    return config;
}

bool LiveFit::control(const std::string& action, const Json& body) {
    // A count or a step: an integer >= 0, held to the page's bound.
    const auto integer = [&](const char* key, long fallback) {
        if (!body.contains(key)) return fallback;
        if (!body[key].is_number_integer() || body[key].get<long long>() < 0)
            throw Error(std::string("'") + key + "': expected an integer >= 0, got " + body[key].dump());
        return static_cast<long>(std::min<long long>(body[key].get<long long>(), kMaxSteps));
    };
    if (action == "train") {
        train();
    } else if (action == "pause") {
        pause();
    } else if (action == "step") {
        step(integer("count", 10));
    } else if (action == "advance") {
        if (!body.contains("to")) throw Error("'to': the step to advance to is missing");
        advance(integer("to", 0));
    } else if (action == "units") {
        if (!body.contains("on") || !body["on"].is_boolean()) throw Error("'on': expected true or false");
        show_units(body["on"].get<bool>());
    } else {
        return false;
    }
    return true;
}

namespace {
// Targets the page offers; any other expression can be typed.
const std::vector<std::string> kTargets = {"sin(3*x)", "abs(x)", "x^2", "exp(-x^2)", "tanh(4*x)", "sin(x)+0.3*sin(7*x)"};

const runner::KeySpec& key_spec(const std::string& path) {
    for (const auto& kind : all_kinds())
        if (kind.name == "width_sweep")
            if (const runner::KeySpec* k = kind.schema.find(path)) return *k;
    throw Error("width_sweep has no key '" + path + "'");
}
}  // namespace

runner::LiveKind live_kind() {
    return {.page = kPage,
            .options =
                [] {
                    const Json defaults = live_config(Json::object());
                    const Json flat = {{"target", defaults["target"]},       {"interval", defaults["interval"]},
                                       {"samples", defaults["samples"]},     {"model.width", defaults["model"]["width"]},
                                       {"activation", defaults["activation"]}, {"init", defaults["init"]},
                                       {"optimizer", defaults["optimizer"]}, {"lr", defaults["lr"]},
                                       {"steps", defaults["steps"]},         {"seed", defaults["seeds"][0]}};
                    return Json{{"activations", key_spec("activation").choices},
                                {"optimizers", key_spec("optimizer").choices},
                                {"targets", kTargets},
                                {"max_width", kMaxWidth},
                                {"max_steps", kMaxSteps},
                                {"defaults", flat}};
                },
            .start = [](const Json& parameters, double steps_per_second) -> std::unique_ptr<runner::LiveSession> {
                const Json config = live_config(parameters);
                const bool units = parameters.contains("units") && parameters["units"].get<bool>();  // a boolean: live_config checked
                return std::make_unique<LiveFit>(config, units, steps_per_second);
            }};
}

}  // namespace ffn::experiments::width_sweep
