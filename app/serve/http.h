#pragma once
// The HTTP/1.1 server under `ffn-lab serve`. One thread waits on every
// socket at once (epoll), so a client that sends slowly, or nothing at all,
// costs a buffer and a file descriptor, never a thread: only a request that
// has arrived whole goes to a worker, and only an event stream keeps a
// thread (the caller caps how many streams there are). Each request has a
// total deadline, however slowly its bytes trickle in; headers and bodies
// have fixed sizes; a chunked request body is refused before it is read.
// cpp-httplib, which served the page before, spends a thread on every
// waiting socket and resets its timeout with each byte: 60 clients sending
// a header line every 2 s held all its threads.
#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ffn::serve::http {

struct Limits {
    std::size_t header_bytes = 16 * 1024;  // the request line and headers; beyond, 431
    std::size_t header_count = 64;         // header lines; beyond, 431
    std::size_t body_bytes = 64 * 1024;    // by Content-Length; beyond it, or chunked, 413
    // From a request's first byte to its last: a client that trickles its
    // headers gets a 408 and is closed, whatever the pace of its bytes.
    std::chrono::milliseconds request_time{10'000};
    std::chrono::milliseconds idle_time{5'000};    // a kept-alive connection with no request is closed
    std::chrono::milliseconds write_time{10'000};  // to take an answer (an event's, for a stream)
    std::size_t requests_per_connection = 100;
    // Open connections (streams aside); at the cap, a new one closes the
    // connection that has waited longest without a whole request. Also held
    // under the process's file limit.
    std::size_t connections = 1000;
    int workers = 4;  // threads that run handlers; each request's handler is quick
};

struct Request {
    std::string method, path;  // the path percent-decoded
    // An absolute-form target's host[:port] ("GET http://127.0.0.1:8000/ ..."),
    // which stands for the Host header's value (RFC 9112 3.2.2); else "".
    std::string authority;
    std::vector<std::pair<std::string, std::string>> headers;  // names in lower case, in order
    std::map<std::string, std::string> params;                 // the query, decoded
    std::string body;
    std::vector<std::string> matches;  // the path matched, then the route pattern's groups

    // The first value of a header ("" when absent), and how many it has.
    std::string header(std::string_view name) const;
    std::size_t header_count(std::string_view name) const;
};

// Writes to an event stream's client; false once the client has gone.
using Write = std::function<bool(std::string_view)>;

struct Response {
    int status = 200;
    std::string content_type = "text/plain; charset=utf-8", body;
    std::vector<std::pair<std::string, std::string>> headers;
    bool close = false;  // close the connection after this answer
    // An event stream instead of a body (chunked): `next` is called on the
    // stream's own thread until it returns false or a write fails; then
    // `ended`, once, whether or not the stream ever started.
    std::function<bool(const Write&)> next;
    std::function<void()> ended;
};

using Handler = std::function<void(const Request&, Response&)>;
// Answers a request before routing (returns true), or lets it through.
using Guard = std::function<bool(const Request&, Response&)>;
// Fills in an answer the server gives itself: a malformed request, a
// limit, no such route, a handler that threw.
using Refuse = std::function<void(Response&, int status, const std::string& message)>;

class Server {
public:
    // Listens on an IP address (v4 or v6) and port (0: any free one).
    // Throws ffn::Error when it cannot.
    Server(const std::string& address, int port, Refuse refuse, Limits limits = {});
    ~Server();
    Server(const Server&) = delete;
    Server& operator=(const Server&) = delete;

    int port() const;
    const Limits& limits() const;
    // A handler for METHOD on paths matching `pattern` (a whole-path
    // regex); GET routes answer HEAD too. Set before run().
    void route(const std::string& method, const std::string& pattern, Handler handler);
    void guard(Guard guard);

    // Serves until stop(); returns once every worker and stream has ended.
    void run();
    // From any thread, before or during run().
    void stop();

    struct Impl;

private:
    std::unique_ptr<Impl> impl_;
};

// A request's head (its request line and header lines, without the blank
// line that ends them) read and checked: the request, or the status and
// line that refuse it.
struct Head {
    int status = 0;  // 0: a request to route; else the refusal's status
    std::string message;
    Request request;
    std::size_t content_length = 0;
    bool keep_alive = true;
    bool expects_continue = false;  // Expect: 100-continue
};
Head parse_head(std::string_view text, const Limits& limits);

// The status line's words for a status code ("Not Found").
std::string_view reason(int status);

}  // namespace ffn::serve::http
