#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>

#include <fmt/format.h>

#include <random>

#include "core/error.h"
#include "core/hash.h"
#include "experiments/registry.h"
#include "serve/page.h"

namespace ffn::serve {

namespace {

using namespace std::chrono_literals;

// Targets the page offers; any other expression can be typed.
const std::vector<std::string> kTargets = {"sin(3*x)", "abs(x)", "x^2", "exp(-x^2)", "tanh(4*x)", "sin(x)+0.3*sin(7*x)"};

// Bytes that are not UTF-8 (a path's %ff, a body's) are replaced, not
// thrown over: a request must never take the server down.
void reply(http::Response& res, int status, const Json& body) {
    res.status = status;
    res.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
    res.content_type = "application/json";
}

void refuse(http::Response& res, int status, const std::string& message) { reply(res, status, {{"error", message}}); }

// The body as JSON; an empty body is an empty object.
Json body_of(const http::Request& req) {
    if (req.body.empty()) return Json::object();
    try {
        return Json::parse(req.body);
    } catch (const Json::exception& e) {  // a parse error, or a number beyond double (1e400)
        throw Error(std::string("the request body: not JSON we can read (") + e.what() + ")");
    }
}

const runner::KeySpec& width_sweep_key(const std::string& path) {
    for (const auto& kind : experiments::all_kinds())
        if (kind.name == "width_sweep")
            if (const runner::KeySpec* k = kind.schema.find(path)) return *k;
    throw Error("width_sweep has no key '" + path + "'");
}

}  // namespace

bool is_loopback_host(const std::string& host) {
    if (host == "localhost") return true;
    in_addr v4{};
    if (::inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
    in6_addr v6{};
    if (::inet_pton(AF_INET6, host.c_str(), &v6) == 1) {
        if (IN6_IS_ADDR_LOOPBACK(&v6)) return true;
        return IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127;
    }
    throw Error("--host '" + host + "': expected an IP address (127.0.0.1, ::1, 0.0.0.0, 192.168.1.5 ...) or localhost");
}

Server::Server(const ServeOptions& options)
    : options_(options), loopback_(is_loopback_host(options.host)) {
    http_ = std::make_unique<http::Server>(options.host, options.port, refuse, options.limits);
    port_ = http_->port();
    routes();
    reaper_ = std::thread([this] {
        while (!stopping_) {
            std::this_thread::sleep_for(200ms);
            end_idle_sessions();
        }
    });
}

Server::~Server() {
    stop();
    reaper_.join();
    std::lock_guard lock(mutex_);
    sessions_.clear();  // each ends its training and joins its thread
}

void Server::run() { http_->run(); }

void Server::stop() {
    stopping_ = true;
    http_->stop();
}

std::shared_ptr<Session> Server::find(const std::string& id) {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return nullptr;
    it->second->touch();
    return it->second;
}

void Server::end_idle_sessions() {
    std::vector<std::shared_ptr<Session>> ended;  // destroyed outside the lock: each joins its thread
    {
        std::lock_guard lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        for (auto it = sessions_.begin(); it != sessions_.end();) {
            if (now - it->second->last_seen() > options_.idle) {
                it->second->close();
                ended.push_back(it->second);
                it = sessions_.erase(it);
            } else {
                ++it;
            }
        }
    }
}

void Server::routes() {
    auto& s = *http_;
    s.route("GET", "/", [](const http::Request&, http::Response& res) {
        res.body = kPage;
        res.content_type = "text/html; charset=utf-8";
    });

    s.route("GET", "/api/options", [](const http::Request&, http::Response& res) {
        Json defaults = session_config(Json::object());
        Json flat = {{"target", defaults["target"]},       {"interval", defaults["interval"]},
                     {"samples", defaults["samples"]},     {"model.width", defaults["model"]["width"]},
                     {"activation", defaults["activation"]}, {"init", defaults["init"]},
                     {"optimizer", defaults["optimizer"]}, {"lr", defaults["lr"]},
                     {"steps", defaults["steps"]},         {"seed", defaults["seeds"][0]}};
        reply(res, 200,
              {{"activations", width_sweep_key("activation").choices},
               {"optimizers", width_sweep_key("optimizer").choices},
               {"targets", kTargets},
               {"max_width", kMaxWidth},
               {"max_steps", kMaxSteps},
               {"defaults", flat}});
    });

    s.route("POST", "/api/sessions", [this](const http::Request& req, http::Response& res) {
        try {
            const Json page = body_of(req);
            const Json config = session_config(page);
            const bool units = page.contains("units") && page["units"].get<bool>();  // a boolean: session_config checked
            // Asked before a session starts its thread, and again as it joins.
            const std::string why = fmt::format("{} sessions are open, the most this server trains at once; close a tab", kMaxSessions);
            if (std::lock_guard lock(mutex_); sessions_.size() >= kMaxSessions) return refuse(res, 503, why);
            auto session = std::make_shared<Session>(config, units, options_.steps_per_second);
            std::lock_guard lock(mutex_);
            if (sessions_.size() >= kMaxSessions) return refuse(res, 503, why);
            std::random_device device;  // an id another page cannot guess, not a result's randomness
            const std::string id = fmt::format("{:016x}", mix64((static_cast<std::uint64_t>(device()) << 32) ^ device() ^ ++next_id_));
            sessions_[id] = session;
            reply(res, 200, {{"id", id}, {"config", config}});
        } catch (const Error& e) {
            refuse(res, 400, e.what());
        }
    });

    s.route("GET", R"(/api/sessions/([0-9a-f]+)/events)", [this](const http::Request& req, http::Response& res) {
        auto session = find(req.matches[1]);
        if (!session) return refuse(res, 404, "no such session (it ended after a minute unwatched); press Reset");
        if (!session->add_listener())
            return refuse(res, 429, fmt::format("this session has {} streams open already", kMaxStreams));
        res.headers.emplace_back("Cache-Control", "no-cache");
        res.content_type = "text/event-stream";
        res.next = [this, session, seen = std::uint64_t{0}, curve_sent = std::size_t{0}, setup_sent = false](const http::Write& write) mutable {
            if (stopping_ || session->closed()) return false;
            session->touch();
            std::string event;
            if (!setup_sent) {
                event = "data: " + session->setup() + "\n\n";
                setup_sent = true;
            } else if (auto state = session->next_state(seen, curve_sent, 1000ms)) {
                seen = state->first;
                event = "data: " + state->second + "\n\n";
            } else {
                event = ": still here\n\n";  // a comment: keeps the stream open and finds a closed one
            }
            return write(event);
        };
        res.ended = [session] { session->remove_listener(); };
    });

    auto control = [this](const std::string& action, auto apply) {
        http_->route("POST", "/api/sessions/([0-9a-f]+)/" + action, [this, apply](const http::Request& req, http::Response& res) {
            auto session = find(req.matches[1]);
            if (!session) return refuse(res, 404, "no such session (it ended after a minute unwatched); press Reset");
            try {
                apply(*session, body_of(req));
                reply(res, 200, Json::object());
            } catch (const Error& e) {
                refuse(res, 400, e.what());
            }
        });
    };
    auto integer = [](const Json& body, const char* key, long fallback) {
        if (!body.contains(key)) return fallback;
        if (!body[key].is_number_integer() || body[key].get<long long>() < 0)
            throw Error(std::string("'") + key + "': expected an integer >= 0, got " + body[key].dump());
        return static_cast<long>(std::min<long long>(body[key].get<long long>(), kMaxSteps));
    };
    control("train", [](Session& s, const Json&) { s.train(); });
    control("pause", [](Session& s, const Json&) { s.pause(); });
    control("step", [integer](Session& s, const Json& body) { s.step(integer(body, "count", 10)); });
    control("advance", [integer](Session& s, const Json& body) {
        if (!body.contains("to")) throw Error("'to': the step to advance to is missing");
        s.advance(integer(body, "to", 0));
    });
    control("units", [](Session& s, const Json& body) {
        if (!body.contains("on") || !body["on"].is_boolean()) throw Error("'on': expected true or false");
        s.show_units(body["on"].get<bool>());
    });

    s.route("GET", R"(/api/sessions/([0-9a-f]+)/config)", [this](const http::Request& req, http::Response& res) {
        auto session = find(req.matches[1]);
        if (!session) return refuse(res, 404, "no such session (it ended after a minute unwatched); press Reset");
        // ?at=STEP: the config of the state on screen, which a sweep with
        // that many steps reproduces bit for bit (the learning rate is
        // constant, so the first STEP steps of any budget are the same).
        Json config = session->config();
        if (const auto given = req.params.find("at"); given != req.params.end()) {
            const std::string& at = given->second;
            const long budget = config["steps"].get<long>();
            char* end = nullptr;
            const long step = std::strtol(at.c_str(), &end, 10);
            if (at.empty() || *end != '\0' || step < 0 || step > budget)
                return refuse(res, 400, "'at': expected a step from 0 to " + std::to_string(budget));
            config["steps"] = step;
        }
        res.body = config.dump(2) + "\n";
        res.content_type = "application/json";
    });

    s.route("DELETE", R"(/api/sessions/([0-9a-f]+))", [this](const http::Request& req, http::Response& res) {
        std::shared_ptr<Session> ended;
        {
            std::lock_guard lock(mutex_);
            const auto it = sessions_.find(req.matches[1]);
            if (it != sessions_.end()) {
                ended = it->second;
                sessions_.erase(it);
            }
        }
        if (ended) ended->close();  // its streams end too, and the training with the last of them
        reply(res, ended ? 200 : 404, Json::object());
    });

    // Another web site's page may send requests to 127.0.0.1 too: posts
    // must be JSON (which a plain form cannot send without asking), and a
    // server on a loopback address answers only to loopback names (which
    // a rebound DNS name is not).
    s.guard([this](const http::Request& req, http::Response& res) {
        // RFC 9112: a request with no Host, or with more than one, is a 400.
        if (req.header_count("Host") != 1) {
            refuse(res, 400, "a request takes exactly one Host header");
            return true;
        }
        // The loopback names, and the address it listens on (127.0.0.2, say).
        const std::string host = req.header("Host"), port = ":" + std::to_string(port_);
        const std::string own = (options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host) + port;
        if (loopback_ && host != "127.0.0.1" + port && host != "localhost" + port && host != "[::1]" + port && host != own) {
            refuse(res, 403, "Host '" + host + "': this server answers to its own address, 127.0.0.1, localhost and [::1] only");
            return true;
        }
        if (req.method == "POST" && !req.header("Content-Type").starts_with("application/json")) {
            refuse(res, 415, "a POST here takes a JSON body (Content-Type: application/json)");
            return true;
        }
        return false;
    });
}

}  // namespace ffn::serve
