#pragma once
// `ffn-lab serve`: the host of an experiment kind's live page
// (ExperimentKind::live, runner/live.h), served by our own HTTP server
// (http.h). It knows no kind: the page (built into the binary) only draws,
// and every run trains in the kind's LiveSession through the library's own
// code. Sessions nobody watches end after a while, and there are at most
// kMaxSessions at once.
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "runner/experiment.h"
#include "serve/http.h"

namespace ffn::serve {

using runner::Json;

inline constexpr std::size_t kMaxSessions = 16;
inline constexpr int kMaxStreams = 2;  // event streams per session: a page's, and its reconnection's

struct ServeOptions {
    std::string experiment;  // the kind whose page is served; empty: the first that has one
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
    // an unknown host, a kind with no live page).
    Server(const ServeOptions& options, const std::vector<runner::ExperimentKind>& kinds);
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    int port() const { return port_; }
    // Serves until stop(), from any thread (a signal's watcher).
    void run();
    void stop();

    // The kind whose page this server serves.
    const std::string& experiment() const { return kind_name_; }

private:
    // A session with what the host keeps of it: when it was last seen
    // (sessions nobody watches end), how many streams it has.
    struct Hosted {
        std::unique_ptr<runner::LiveSession> live;
        std::mutex mutex;
        std::chrono::steady_clock::time_point last_seen = std::chrono::steady_clock::now();
        int listeners = 0;
        void touch();
        bool add_listener();
        void remove_listener();
        std::chrono::steady_clock::time_point seen();
    };

    void routes();
    std::shared_ptr<Hosted> find(const std::string& id);
    void end_idle_sessions();

    ServeOptions options_;
    std::string kind_name_;
    runner::LiveKind live_;
    std::unique_ptr<http::Server> http_;
    int port_ = 0;
    bool loopback_ = true;  // answers loopback Host names only
    std::mutex mutex_;
    std::map<std::string, std::shared_ptr<Hosted>> sessions_;
    std::uint64_t next_id_ = 0;
    std::atomic<bool> stopping_{false};
    std::thread reaper_;
};

}  // namespace ffn::serve
