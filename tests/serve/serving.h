#pragma once
// A serve::Server on a free port of its own, for the serve tests, with an
// HTTP client that is not ours (cpp-httplib) and a raw socket for what no
// well-behaved client sends.
#include <doctest/doctest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "experiments/registry.h"
#include "serve/server.h"

namespace ffn::tests {

using serve::Json;

// A server on a free port, serving on a thread of its own while the test
// runs.
struct Running {
    serve::Server server;
    std::thread thread;
    httplib::Client client;
    explicit Running(double steps_per_second = 250, const std::string& host = "127.0.0.1", serve::http::Limits limits = {})
        : server({.host = host, .port = 0, .steps_per_second = steps_per_second, .limits = limits}, experiments::all_kinds()),
          thread([this] { server.run(); }),
          client(host, server.port()) {
        client.set_read_timeout(30, 0);
    }
    ~Running() {
        server.stop();
        thread.join();
    }

    Json post(const std::string& path, const Json& body, int expect = 200) {
        const auto res = client.Post(path.c_str(), body.dump(), "application/json");
        REQUIRE(res);
        CHECK(res->status == expect);
        return Json::parse(res->body);
    }
    std::string session(const Json& parameters) { return post("/api/sessions", parameters)["id"].get<std::string>(); }

    // The session's first state that satisfies `done` (null if none comes).
    Json state_when(const std::string& id, const std::function<bool(const Json&)>& done) {
        Json found;
        std::string buffer;
        // A deadline, so that a state that never comes fails the test
        // instead of hanging it (the stream sends a comment every second).
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        client.Get(("/api/sessions/" + id + "/events").c_str(), [&](const char* data, std::size_t size) {
            if (std::chrono::steady_clock::now() > deadline) return false;
            buffer.append(data, size);
            for (std::size_t end; (end = buffer.find("\n\n")) != std::string::npos; buffer.erase(0, end + 2)) {
                const std::string event = buffer.substr(0, end);
                if (event.rfind("data: ", 0) != 0) continue;
                const Json state = Json::parse(event.substr(6));
                if (state["kind"] == "state" && done(state)) {
                    found = state;
                    return false;
                }
            }
            return true;
        });
        return found;
    }
};


// A socket connected to 127.0.0.1:port (-1 when it cannot connect).
inline int connect_to(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    sockaddr_in at{};
    at.sin_family = AF_INET;
    at.sin_port = htons(static_cast<std::uint16_t>(port));
    at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

}  // namespace ffn::tests
