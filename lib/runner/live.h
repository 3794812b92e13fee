#pragma once
// A run that a person watches while it trains (`ffn-lab serve`). A kind
// that offers one sets ExperimentKind::live; the host (app/serve) knows no
// kind: it serves the kind's page, makes sessions through the kind from the
// page's parameters, relays their states to the page and the page's
// controls to them.
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "runner/schema.h"

namespace ffn::runner {

class LiveSession {
public:
    virtual ~LiveSession() = default;

    // The config `ffn-lab sweep` runs to reproduce the session: the whole
    // run, or (at_step) the state shown at that step. Throws ffn::Error
    // for a step the session cannot reproduce.
    virtual Json config(std::optional<long> at_step = std::nullopt) const = 0;
    // The unchanging part of what the page draws (a JSON text).
    virtual std::string setup() const = 0;
    // The first state after number `seen` (0: any), waiting up to
    // `timeout` for one, with its number. `curve_sent` counts the loss
    // points this listener has had, so each state carries only new ones.
    virtual std::optional<std::pair<std::uint64_t, std::string>> next_state(std::uint64_t seen, std::size_t& curve_sent,
                                                                            std::chrono::milliseconds timeout) = 0;
    // A control the page sends (POST .../sessions/ID/ACTION, a JSON body).
    // Throws ffn::Error naming what is wrong with the body; returns false
    // when there is no such action.
    virtual bool control(const std::string& action, const Json& body) = 0;
    // Ends the training; the session's streams end with it.
    virtual void close() = 0;
    virtual bool closed() const = 0;
};

struct LiveKind {
    const char* page = "";  // the HTML page, built into the binary
    // What the page offers (GET /api/options): choices, bounds, defaults.
    std::function<Json()> options;
    // A session from the page's parameters (POST /api/sessions), trained at
    // `steps_per_second` when it runs paced. Throws ffn::Error in the CLI's
    // words for a parameter that cannot be run.
    std::function<std::unique_ptr<LiveSession>(const Json& parameters, double steps_per_second)> start;
};

}  // namespace ffn::runner
