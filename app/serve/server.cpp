#include "serve/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include <fmt/format.h>

#include <random>

#include "core/error.h"
#include "core/hash.h"
#include "io/json.h"

namespace ffn::serve {

namespace {

using namespace std::chrono_literals;

// Bytes that are not UTF-8 (a path's %ff, a body's) are replaced, not
// thrown over: a request must never take the server down.
void reply(http::Response& res, int status, const Json& body) {
    res.status = status;
    res.body = body.dump(-1, ' ', false, Json::error_handler_t::replace);
    res.content_type = "application/json";
}

void refuse(http::Response& res, int status, const std::string& message) { reply(res, status, {{"error", message}}); }

// The body as JSON, read as a config file is (a repeated key refused, the
// position of a fault named); an empty body is an empty object.
Json body_of(const http::Request& req) {
    if (req.body.empty()) return Json::object();
    return io::parse_json(req.body, "the request body");
}

// The kind named, or the first with a live page.
const runner::ExperimentKind& live_kind(const std::string& name, const std::vector<runner::ExperimentKind>& kinds) {
    std::string offered;
    for (const auto& kind : kinds) {
        if (!kind.live) continue;
        if (name.empty() || kind.name == name) return kind;
        offered += (offered.empty() ? "" : ", ") + kind.name;
    }
    if (name.empty()) throw Error("serve: no experiment kind has a live page");
    const bool known = std::any_of(kinds.begin(), kinds.end(), [&](const auto& kind) { return kind.name == name; });
    throw Error("--experiment " + name + (known ? ": no live page for it (" : ": no such experiment kind (") +
                (offered.empty() ? "none has a live page" : "these have a live page: " + offered) + ")");
}

const char* const kNoSession = "no such session (it ended after a minute unwatched); press Reset";

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

void Server::Hosted::touch() {
    std::lock_guard lock(mutex);
    last_seen = std::chrono::steady_clock::now();
}

bool Server::Hosted::add_listener() {
    std::lock_guard lock(mutex);
    if (listeners >= kMaxStreams) return false;
    ++listeners;
    return true;
}

void Server::Hosted::remove_listener() {
    std::lock_guard lock(mutex);
    --listeners;
}

std::chrono::steady_clock::time_point Server::Hosted::seen() {
    std::lock_guard lock(mutex);
    return last_seen;
}

Server::Server(const ServeOptions& options, const std::vector<runner::ExperimentKind>& kinds)
    : options_(options), loopback_(is_loopback_host(options.host)) {
    const runner::ExperimentKind& kind = live_kind(options.experiment, kinds);
    kind_name_ = kind.name;
    live_ = *kind.live;
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

std::shared_ptr<Server::Hosted> Server::find(const std::string& id) {
    std::lock_guard lock(mutex_);
    const auto it = sessions_.find(id);
    if (it == sessions_.end()) return nullptr;
    it->second->touch();
    return it->second;
}

void Server::end_idle_sessions() {
    std::vector<std::shared_ptr<Hosted>> ended;  // destroyed outside the lock: each joins its thread
    {
        std::lock_guard lock(mutex_);
        const auto now = std::chrono::steady_clock::now();
        for (auto it = sessions_.begin(); it != sessions_.end();) {
            if (now - it->second->seen() > options_.idle) {
                it->second->live->close();
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
    s.route("GET", "/", [this](const http::Request&, http::Response& res) {
        res.body = live_.page;
        res.content_type = "text/html; charset=utf-8";
    });

    s.route("GET", "/api/options", [this](const http::Request&, http::Response& res) { reply(res, 200, live_.options()); });

    s.route("POST", "/api/sessions", [this](const http::Request& req, http::Response& res) {
        try {
            // Asked before a session starts its thread, and again as it joins.
            const std::string why = fmt::format("{} sessions are open, the most this server trains at once; close a tab", kMaxSessions);
            const Json parameters = body_of(req);
            if (std::lock_guard lock(mutex_); sessions_.size() >= kMaxSessions) return refuse(res, 503, why);
            auto hosted = std::make_shared<Hosted>();
            hosted->live = live_.start(parameters, options_.steps_per_second);
            std::lock_guard lock(mutex_);
            if (sessions_.size() >= kMaxSessions) return refuse(res, 503, why);
            std::random_device device;  // an id another page cannot guess, not a result's randomness
            const std::string id = fmt::format("{:016x}", mix64((static_cast<std::uint64_t>(device()) << 32) ^ device() ^ ++next_id_));
            sessions_[id] = hosted;
            reply(res, 200, {{"id", id}, {"config", hosted->live->config()}});
        } catch (const Error& e) {
            refuse(res, 400, e.what());
        }
    });

    s.route("GET", R"(/api/sessions/([0-9a-f]{16})/events)", [this](const http::Request& req, http::Response& res) {
        auto session = find(req.matches[1]);
        if (!session) return refuse(res, 404, kNoSession);
        if (!session->add_listener()) return refuse(res, 429, fmt::format("this session has {} streams open already", kMaxStreams));
        res.headers.emplace_back("Cache-Control", "no-cache");
        res.content_type = "text/event-stream";
        res.next = [this, session, seen = std::uint64_t{0}, curve_sent = std::size_t{0}, setup_sent = false](const http::Write& write) mutable {
            runner::LiveSession& live = *session->live;
            if (stopping_ || live.closed()) return false;
            session->touch();
            std::string event;
            if (!setup_sent) {
                event = "data: " + live.setup() + "\n\n";
                setup_sent = true;
            } else if (auto state = live.next_state(seen, curve_sent, 1000ms)) {
                seen = state->first;
                event = "data: " + state->second + "\n\n";
            } else {
                event = ": still here\n\n";  // a comment: keeps the stream open and finds a closed one
            }
            return write(event);
        };
        res.ended = [session] { session->remove_listener(); };
    });

    s.route("POST", R"(/api/sessions/([0-9a-f]{16})/([a-z]{1,32}))", [this](const http::Request& req, http::Response& res) {
        auto session = find(req.matches[1]);
        if (!session) return refuse(res, 404, kNoSession);
        try {
            if (!session->live->control(req.matches[2], body_of(req)))
                return refuse(res, 404, fmt::format("POST {}: no such page or call", req.path));
            reply(res, 200, Json::object());
        } catch (const Error& e) {
            refuse(res, 400, e.what());
        }
    });

    s.route("GET", R"(/api/sessions/([0-9a-f]{16})/config)", [this](const http::Request& req, http::Response& res) {
        auto session = find(req.matches[1]);
        if (!session) return refuse(res, 404, kNoSession);
        std::optional<long> at;
        if (const auto given = req.params.find("at"); given != req.params.end()) {
            // Text that is no step asks for step -1, which the session
            // refuses in the words that name its range.
            char* end = nullptr;
            const long step = std::strtol(given->second.c_str(), &end, 10);
            at = given->second.empty() || *end != '\0' ? -1 : step;
        }
        try {
            res.body = session->live->config(at).dump(2) + "\n";
            res.content_type = "application/json";
        } catch (const Error& e) {
            refuse(res, 400, e.what());
        }
    });

    s.route("DELETE", R"(/api/sessions/([0-9a-f]{16}))", [this](const http::Request& req, http::Response& res) {
        std::shared_ptr<Hosted> ended;
        {
            std::lock_guard lock(mutex_);
            const auto it = sessions_.find(req.matches[1]);
            if (it != sessions_.end()) {
                ended = it->second;
                sessions_.erase(it);
            }
        }
        if (ended) ended->live->close();  // its streams end too, and the training with the last of them
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
        const std::string host = req.authority.empty() ? req.header("Host") : req.authority, port = ":" + std::to_string(port_);
        const std::string own = options_.host.find(':') != std::string::npos ? "[" + options_.host + "]" : options_.host;
        // With the port, or without it on port 80, where browsers leave it out.
        const auto named = [&](const std::string& name) { return host == name + port || (port_ == 80 && host == name); };
        if (loopback_ && !named("127.0.0.1") && !named("localhost") && !named("[::1]") && !named(own)) {
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
