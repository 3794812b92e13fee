#pragma once
// One page's training session for `ffn-lab serve`: a width_sweep run (a
// 1-m-1 net on a 1-D target) trained on a thread of its own through the
// same code as `sweep` (width_sweep::fit_watched), paced so that a person
// can watch it, paused, stepped and advanced on request, and seen as a
// sequence of states (JSON texts) that the page draws.
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "experiments/width_sweep/width_sweep.h"
#include "io/json.h"
#include "runner/config.h"

namespace ffn::serve {

using Json = nlohmann::ordered_json;

// What one page may ask for: bounds that keep one tab from starving the
// machine, whatever the config schema itself would accept.
inline constexpr long kMaxWidth = 64;
inline constexpr long kMaxSamples = 2000;
inline constexpr long kMaxSteps = 100000;
inline constexpr std::size_t kGridPoints = 201;  // where the curves are drawn
inline constexpr int kMaxStreams = 2;  // event streams per session: a page's, and its reconnection's

// The page's parameters (the keys of a width_sweep config, `seed` for its
// one seed, `units` for the contributions) made into the config that
// `ffn-lab sweep` runs: the width sweep's protocol (configs/width.json's)
// where the page says nothing. Throws ffn::Error, in the CLI's words, for
// an unknown key, a wrong type, a value out of range or a target that
// does not parse.
Json session_config(const Json& page_parameters);

class Session {
public:
    // `config` from session_config. Starts paused at step 0, the initial
    // net drawn. Throws ffn::Error as session_config does.
    Session(const Json& config, bool units, double steps_per_second = 250);
    ~Session();  // ends the training and waits for its thread
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    const Json& config() const { return config_; }
    // The unchanging part: the grid, the target on it, the samples.
    std::string setup() const;
    // The first state after number `seen` (0: any), waiting up to
    // `timeout` for one; with its number. Its "curve" holds the loss points
    // from `curve_sent` on, which then counts them.
    std::optional<std::pair<std::uint64_t, std::string>> next_state(std::uint64_t seen, std::size_t& curve_sent,
                                                                    std::chrono::milliseconds timeout);

    void train();                 // run, paced, to the step budget
    void pause();                 // stop at the step reached
    void step(long count);        // `count` more steps, then pause
    void advance(long to_step);   // as fast as it goes to that step, then pause
    void show_units(bool on);
    // Ends the training (DELETE, or unwatched too long); its streams end.
    void close();
    bool closed() const;
    // Event streams open on this session, at most kMaxStreams.
    bool add_listener();
    void remove_listener();
    // When a request or a listener last came: sessions nobody watches end.
    void touch();
    std::chrono::steady_clock::time_point last_seen() const;

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
    int listeners_ = 0;
    // The net training ended with, drawn again when units are asked after.
    std::optional<experiments::width_sweep::FittedNet> final_net_;
    long final_step_ = 0;
    double final_loss_ = 0;
    std::string final_status_, final_message_;
    long step_ = 0;
    std::chrono::steady_clock::time_point paced_from_{};
    long paced_from_step_ = 0;
    std::chrono::steady_clock::time_point last_state_time_{}, last_seen_;
    std::vector<std::pair<long, double>> curve_;  // loss points not yet sent
    std::uint64_t state_number_ = 0;
    std::string state_;
    std::thread thread_;
};

}  // namespace ffn::serve
