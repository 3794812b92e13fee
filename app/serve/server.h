#pragma once
// `ffn-lab serve`: document 002's "Try it" figure as a page, with the API
// behind it, served by our own HTTP server (http.h). The page (app/serve/page.html, built
// into the binary) only draws; every net trains in a Session (session.h)
// through the library's own code. Sessions nobody watches end after a
// while, and there are at most kMaxSessions at once.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "serve/http.h"
#include "serve/session.h"

namespace ffn::serve {

inline constexpr std::size_t kMaxSessions = 16;

struct ServeOptions {
    std::string host = "127.0.0.1";
    int port = 8000;  // 0: any free port
    std::chrono::seconds idle = std::chrono::seconds(60);  // a session with no request or listener for this long ends
    double steps_per_second = 250;  // the pace of Train
    http::Limits limits;  // sizes and deadlines of requests and connections
};

// Whether `host`, an address to listen on, is this machine's loopback:
// any of 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z) or the name localhost.
// Throws ffn::Error naming it when it is neither an IP address nor
// localhost: a name would be resolved, and could resolve elsewhere.
bool is_loopback_host(const std::string& host);

class Server {
public:
    // Binds the address; throws ffn::Error when it cannot (a port in use,
    // an unknown host).
    explicit Server(const ServeOptions& options);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    int port() const { return port_; }
    // Serves until stop(), from any thread (a signal's watcher).
    void run();
    void stop();

private:
    void routes();
    std::shared_ptr<Session> find(const std::string& id);
    void end_idle_sessions();

    ServeOptions options_;
    std::unique_ptr<http::Server> http_;
    int port_ = 0;
    bool loopback_ = true;  // answers loopback Host names only
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Session>> sessions_;
    std::uint64_t next_id_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread reaper_;
};

}  // namespace ffn::serve
