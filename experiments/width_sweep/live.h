#pragma once
// The width sweep watched live (`ffn-lab serve`, document 002's "Try it"
// figure): one page's run (a 1-m-1 net on a 1-D target) trained on a
// thread of its own through the same code as `sweep` (fit_watched), paced
// so that a person can watch it, paused, stepped and advanced on request,
// and seen as a sequence of states (JSON texts) that page.html draws.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "experiments/width_sweep/width_sweep.h"
#include "runner/config.h"
#include "runner/live.h"

namespace ffn::experiments::width_sweep {

using runner::Json;

// What one page may ask for: bounds that keep one tab from starving the
// machine, whatever the config schema itself would accept.
inline constexpr long kMaxWidth = 64;
inline constexpr long kMaxSamples = 2000;
inline constexpr long kMaxSteps = 100000;
inline constexpr std::size_t kGridPoints = 201;  // where the curves are drawn

// The page's parameters (the keys of a width_sweep config, `seed` for its
// one seed, `units` for the contributions) made into the config that
// `ffn-lab sweep` runs: the width sweep's protocol (configs/width.json's)
// where the page says nothing. Throws ffn::Error, in the CLI's words, for
// an unknown key, a wrong type, a value out of range or a target that
// does not parse.
Json live_config(const Json& page_parameters);

// What `ffn-lab serve` hosts: the page, its options, LiveFit sessions.
runner::LiveKind live_kind();

class LiveFit : public runner::LiveSession {
public:
    // `config` from live_config. Starts paused at step 0, the initial net
    // drawn. Throws ffn::Error as live_config does.
    LiveFit(const Json& config, bool units, double steps_per_second = 250);
    ~LiveFit() override;  // ends the training and waits for its thread
    LiveFit(const LiveFit&) = delete;
    LiveFit& operator=(const LiveFit&) = delete;

    // at_step: the config with that many steps, which `sweep` reproduces
    // bit for bit (the learning rate is constant, so the first STEP steps
    // of any budget are the same).
    Json config(std::optional<long> at_step = std::nullopt) const override;
    // The grid, the target on it, the samples.
    std::string setup() const override;
    std::optional<std::pair<std::uint64_t, std::string>> next_state(std::uint64_t seen, std::size_t& curve_sent,
                                                                    std::chrono::milliseconds timeout) override;
    // train, pause, step {count}, advance {to}, units {on}.
    bool control(const std::string& action, const Json& body) override;
    void close() override;
    bool closed() const override;

    void train();                 // run, paced, to the step budget
    void pause();                 // stop at the step reached
    void step(long count);        // `count` more steps, then pause
    void advance(long to_step);   // as fast as it goes to that step, then pause
    void show_units(bool on);

private:
    void run_training();
    // A state from the net of `step`, under the lock; the waiting pages told.
    void publish(long step, double loss, const experiments::width_sweep::FittedNet& net, const std::string& status,
                 const std::string& message = "");

    Json config_;
    runner::Plan plan_;
    experiments::width_sweep::FitData data_;
    long steps_ = 0;
    bool piecewise_linear_ = false;
    std::vector<double> grid_;
    std::string setup_;
    const double steps_per_second_;

    mutable std::mutex mutex_;
    std::condition_variable changed_;   // a new state, or a new target step
    long target_ = 0;                   // train up to this step, then wait
    bool paced_ = false;                // train(): at steps_per_second_
    bool units_ = false;
    bool stop_ = false;
    bool redraw_ = false;  // show_units while paused
    // The net training ended with, drawn again when units are asked after.
    std::optional<experiments::width_sweep::FittedNet> final_net_;
    long final_step_ = 0;
    double final_loss_ = 0;
    std::string final_status_, final_message_;
    long step_ = 0;
    std::chrono::steady_clock::time_point paced_from_{};
    long paced_from_step_ = 0;
    std::chrono::steady_clock::time_point last_state_time_{};
    std::vector<std::pair<long, double>> curve_;  // loss points not yet sent
    std::uint64_t state_number_ = 0;
    std::string state_;
    std::thread thread_;
};

}  // namespace ffn::experiments::width_sweep
