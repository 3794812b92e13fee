#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>
#include <httplib.h>

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
void reply(httplib::Response& res, int status, const Json& body) {
    res.status = status;
    res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

void refuse(httplib::Response& res, int status, const std::string& message) { reply(res, status, {{"error", message}}); }

// The body as JSON; an empty body is an empty object.
Json body_of(const httplib::Request& req) {
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
    : options_(options), http_(std::make_unique<httplib::Server>()), loopback_(is_loopback_host(options.host)) {
    // One thread per open event stream and a few for the requests around
    // them: several tabs at once, and never more than the sessions allow.
    http_->new_task_queue = [] { return new httplib::ThreadPool(kMaxSessions * kMaxStreams + 8); };
    http_->set_payload_max_length(1 << 16);
    // httplib's default also sets SO_REUSEPORT, which lets a second server
    // share a port in use instead of refusing it: only SO_REUSEADDR here.
    http_->set_socket_options([](socket_t sock) {
        int yes = 1;
        ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });  // a page's parameters are a few hundred bytes
    routes();
    port_ = options.port == 0 ? http_->bind_to_any_port(options.host) : (http_->bind_to_port(options.host, options.port) ? options.port : -1);
    if (port_ < 0)
        throw Error(fmt::format("--host {} --port {}: cannot listen there (the port in use, or not this machine's address)",
                                options.host, options.port));
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

void Server::run() {
    serving_ = true;
    if (!stopping_) http_->listen_after_bind();
    serving_ = false;
}

// httplib's stop() does nothing before its loop has started, so a stop
// that comes that early is repeated until run() has returned.
void Server::stop() {
    stopping_ = true;
    while (serving_) {
        http_->stop();
        std::this_thread::sleep_for(10ms);
    }
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
    s.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(kPage, "text/html; charset=utf-8"); });

    s.Get("/api/options", [](const httplib::Request&, httplib::Response& res) {
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

    s.Post("/api/sessions", [this](const httplib::Request& req, httplib::Response& res) {
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

    s.Get(R"(/api/sessions/([0-9a-f]+)/events)", [this](const httplib::Request& req, httplib::Response& res) {
        auto session = find(req.matches[1]);
        if (!session) return refuse(res, 404, "no such session (it ended after a minute unwatched); press Reset");
        if (!session->add_listener())
            return refuse(res, 429, fmt::format("this session has {} streams open already", kMaxStreams));
        res.set_header("Cache-Control", "no-cache");
        std::uint64_t seen = 0;
        std::size_t curve_sent = 0;
        bool setup_sent = false;
        res.set_chunked_content_provider(
            "text/event-stream", [this, session, seen, curve_sent, setup_sent](std::size_t, httplib::DataSink& sink) mutable {
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
                return sink.write(event.data(), event.size());
            },
            [session](bool) { session->remove_listener(); });
    });

    auto control = [this](const std::string& action, auto apply) {
        http_->Post("/api/sessions/([0-9a-f]+)/" + action, [this, apply](const httplib::Request& req, httplib::Response& res) {
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

    s.Get(R"(/api/sessions/([0-9a-f]+)/config)", [this](const httplib::Request& req, httplib::Response& res) {
        auto session = find(req.matches[1]);
        if (!session) return refuse(res, 404, "no such session (it ended after a minute unwatched); press Reset");
        // ?at=STEP: the config of the state on screen, which a sweep with
        // that many steps reproduces bit for bit (the learning rate is
        // constant, so the first STEP steps of any budget are the same).
        Json config = session->config();
        if (req.has_param("at")) {
            const std::string at = req.get_param_value("at");
            const long budget = config["steps"].get<long>();
            char* end = nullptr;
            const long step = std::strtol(at.c_str(), &end, 10);
            if (at.empty() || *end != '\0' || step < 0 || step > budget)
                return refuse(res, 400, "'at': expected a step from 0 to " + std::to_string(budget));
            config["steps"] = step;
        }
        res.set_content(config.dump(2) + "\n", "application/json");
    });

    s.Delete(R"(/api/sessions/([0-9a-f]+))", [this](const httplib::Request& req, httplib::Response& res) {
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

    // httplib calls this outside its own try: nothing may escape it.
    s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
        if (!res.body.empty()) return;
        try {
            refuse(res, res.status,
                   res.status == 413 ? "the request body: more than 64 KB" : fmt::format("{} {}: no such page or call", req.method, req.path));
        } catch (...) {
            res.set_content("{\"error\": \"a request the server could not answer\"}", "application/json");
        }
    });
    // Another web site's page may send requests to 127.0.0.1 too: posts
    // must be JSON (which a plain form cannot send without asking), and a
    // server on a loopback address answers only to loopback names (which
    // a rebound DNS name is not).
    s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        // RFC 9112: a request with no Host, or with more than one, is a 400.
        if (req.get_header_value_count("Host") != 1) {
            refuse(res, 400, "a request takes exactly one Host header");
            return httplib::Server::HandlerResponse::Handled;
        }
        // The loopback names, and the address it listens on (127.0.0.2, say).
        const std::string host = req.get_header_value("Host"), port = ":" + std::to_string(port_);
        const std::string own = (options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host) + port;
        if (loopback_ && host != "127.0.0.1" + port && host != "localhost" + port && host != "[::1]" + port && host != own) {
            refuse(res, 403, "Host '" + host + "': this server answers to its own address, 127.0.0.1, localhost and [::1] only");
            return httplib::Server::HandlerResponse::Handled;
        }
        // cpp-httplib holds a body to the payload limit only when its
        // Content-Length is given; a chunked body it reads whole. The page
        // sends a Content-Length, so a chunked body is refused before it is
        // read.
        if (req.has_header("Transfer-Encoding")) {
            refuse(res, 411, "a request body here takes a Content-Length, not Transfer-Encoding");
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
        }
        if (req.method == "POST" && !req.get_header_value("Content-Type").starts_with("application/json")) {
            refuse(res, 415, "a POST here takes a JSON body (Content-Type: application/json)");
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
}

}  // namespace ffn::serve
