#include "serve/http.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <list>
#include <mutex>
#include <optional>
#include <regex>
#include <system_error>
#include <thread>
#include <unordered_map>

#include "core/error.h"

namespace ffn::serve::http {

namespace {

using Clock = std::chrono::steady_clock;

std::string head_of(const Response& res, bool keep_alive, std::size_t length, bool chunked) {
    std::string out = fmt::format("HTTP/1.1 {} {}\r\nContent-Type: {}\r\n", res.status, reason(res.status), res.content_type);
    out += chunked ? std::string("Transfer-Encoding: chunked\r\n") : fmt::format("Content-Length: {}\r\n", length);
    out += keep_alive ? "Connection: keep-alive\r\n" : "Connection: close\r\n";
    for (const auto& [k, v] : res.headers) out += k + ": " + v + "\r\n";
    return out + "\r\n";
}

bool send_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

struct Route {
    std::string method;
    std::regex pattern;
    Handler handler;
};

struct Connection {
    int fd = -1;
    // draining: answered and half-closed, reading what the client still
    // sends so that the answer is not lost to a reset (RFC 9112 9.6).
    enum class State { reading, working, writing, draining } state = State::reading;
    std::string in, out;  // read and not yet parsed; to write
    std::size_t written = 0;
    Clock::time_point last;                   // the last byte read or written
    std::optional<Clock::time_point> started;  // the current request's first byte
    Clock::time_point write_started;
    std::size_t served = 0;
    bool close_after = false;
    bool continued = false;  // this request's 100 Continue is sent
    std::uint32_t interest = 0;  // what epoll watches for it
};

struct Job {
    std::uint64_t id;
    Request request;
    bool keep_alive, head_only;
};

struct Done {
    std::uint64_t id;
    Response response;
    bool keep_alive, head_only;
};

constexpr std::uint64_t kListen = 0, kWake = 1;
// How long a closing connection's late bytes are read and dropped.
constexpr std::chrono::seconds kDrainTime{2};

}  // namespace

struct Server::Impl {
    Limits limits;
    Refuse refuse;
    Guard guard;
    std::vector<Route> routes;
    int listen_fd = -1, epoll_fd = -1, wake_fd = -1, port = 0;
    std::atomic<bool> stopping{false};

    std::unordered_map<std::uint64_t, Connection> connections;  // the reactor's alone
    std::uint64_t next_id = 2;
    std::size_t max_connections = 0;
    std::optional<Clock::time_point> accept_paused;  // out of file descriptors: retried after a pause

    std::mutex mutex;  // guards jobs, done
    std::condition_variable jobs_ready;
    std::deque<Job> jobs;
    std::vector<Done> done;
    std::vector<std::thread> workers;
    struct Stream {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> ended = std::make_shared<std::atomic<bool>>(false);
    };
    std::mutex streams_mutex;
    std::list<Stream> streams;

    ~Impl() {
        for (const int fd : {listen_fd, epoll_fd, wake_fd})
            if (fd >= 0) ::close(fd);
    }

    void wake() {
        const std::uint64_t one = 1;
        [[maybe_unused]] const ssize_t n = ::write(wake_fd, &one, sizeof one);
    }

    void watch(std::uint64_t id, Connection& c) {
        std::uint32_t want = 0;
        if (c.state == Connection::State::reading || c.state == Connection::State::draining) want |= EPOLLIN;
        if (c.written < c.out.size()) want |= EPOLLOUT;
        if (want == c.interest) return;
        epoll_event ev{};
        ev.events = want;
        ev.data.u64 = id;
        ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, c.fd, &ev);
        c.interest = want;
    }

    void close(std::uint64_t id) {
        const auto it = connections.find(id);
        if (it == connections.end()) return;
        ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, it->second.fd, nullptr);
        ::close(it->second.fd);
        connections.erase(it);
    }

    // An answer the server gives itself; the connection closes after it.
    void answer_and_close(std::uint64_t id, Connection& c, int status, const std::string& message) {
        Response res;
        refuse(res, status, message);
        res.status = status;
        c.out += head_of(res, false, res.body.size(), false) + res.body;
        c.close_after = true;
        c.state = Connection::State::writing;
        c.write_started = Clock::now();
        flush(id, c);
    }

    // The oldest connection with no request at work: closed to make room.
    bool evict_one() {
        std::optional<std::uint64_t> oldest;
        Clock::time_point when{};
        for (auto& [id, c] : connections) {
            if (c.state == Connection::State::working) continue;
            const Clock::time_point t = c.started.value_or(c.last);
            if (!oldest || t < when) oldest = id, when = t;
        }
        if (!oldest) return false;
        close(*oldest);
        return true;
    }

    void accept_all() {
        for (;;) {
            const int fd = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EINTR || errno == ECONNABORTED) continue;
                // Out of descriptors: one of ours closed frees one. Out of
                // kernel memory, closing ours may not help: pause instead.
                if ((errno == EMFILE || errno == ENFILE) && evict_one()) continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK) pause_accepting();
                return;
            }
            if (connections.size() >= max_connections) evict_one();
            const int yes = 1;
            ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &yes, sizeof yes);
            const std::uint64_t id = next_id++;
            Connection& c = connections[id];
            c.fd = fd;
            c.last = Clock::now();
            c.interest = EPOLLIN;
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.u64 = id;
            if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0) {
                ::close(fd);
                connections.erase(id);
            }
        }
    }

    // Out of descriptors with nothing to close: stop listening for a
    // moment rather than spin on a socket that stays readable.
    void pause_accepting() {
        epoll_event ev{};
        ev.data.u64 = kListen;
        ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
        accept_paused = Clock::now();
    }

    void read(std::uint64_t id, Connection& c) {
        if (c.state == Connection::State::draining) return drain(id, c);
        const std::size_t cap = limits.header_bytes + 4 + limits.body_bytes;
        char buffer[16384];
        while (c.state == Connection::State::reading && c.in.size() < cap) {
            const ssize_t n = ::recv(c.fd, buffer, std::min(sizeof buffer, cap - c.in.size()), 0);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
            if (n <= 0) return close(id);  // closed by the client, or reset
            if (c.in.empty() && !c.started) c.started = Clock::now();
            c.in.append(buffer, static_cast<std::size_t>(n));
            c.last = Clock::now();
            if (!parse(id, c)) return;
        }
    }

    void drain(std::uint64_t id, Connection& c) {
        char buffer[16384];
        for (;;) {
            const ssize_t n = ::recv(c.fd, buffer, sizeof buffer, 0);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
            if (n <= 0) return close(id);
        }
    }

    // Takes a whole request out of c.in and hands it to a worker. False
    // when the connection was closed.
    bool parse(std::uint64_t id, Connection& c) {
        if (c.state != Connection::State::reading || c.in.empty()) return true;
        if (!c.started) c.started = Clock::now();
        std::size_t end = c.in.find("\r\n\r\n"), skip = 4;
        if (const std::size_t lf = c.in.find("\n\n"); lf != std::string::npos && (end == std::string::npos || lf < end)) end = lf, skip = 2;
        if (end == std::string::npos) {
            if (c.in.size() > limits.header_bytes + 3) answer_and_close(id, c, 431, fmt::format("the request's head: more than {} bytes", limits.header_bytes));
            return connections.count(id) > 0;
        }
        Head head = parse_head(std::string_view(c.in).substr(0, end), limits);
        if (head.status != 0) {
            answer_and_close(id, c, head.status, head.message);
            return connections.count(id) > 0;
        }
        const std::size_t whole = end + skip + head.content_length;
        if (c.in.size() < whole) {
            if (head.expects_continue && !c.continued) {
                c.continued = true;
                c.out = "HTTP/1.1 100 Continue\r\n\r\n";
                c.written = 0;
                flush(id, c);
                return connections.count(id) > 0;
            }
            return true;
        }
        if (c.written < c.out.size()) return true;  // the 100 Continue is still going out: flush() comes back here
        head.request.body = c.in.substr(end + skip, head.content_length);
        c.in.erase(0, whole);
        c.out.clear();
        c.written = 0;
        c.started.reset();
        c.continued = false;
        c.state = Connection::State::working;
        watch(id, c);
        const bool head_only = head.request.method == "HEAD";
        if (head_only) head.request.method = "GET";
        {
            std::lock_guard lock(mutex);
            jobs.push_back({id, std::move(head.request), head.keep_alive, head_only});
        }
        jobs_ready.notify_one();
        return true;
    }

    void flush(std::uint64_t id, Connection& c) {
        while (c.written < c.out.size()) {
            const ssize_t n = ::send(c.fd, c.out.data() + c.written, c.out.size() - c.written, MSG_NOSIGNAL);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
            if (n <= 0) return close(id);
            c.written += static_cast<std::size_t>(n);
            c.last = Clock::now();
        }
        if (c.written < c.out.size()) return watch(id, c);
        c.out.clear();
        c.written = 0;
        if (c.state != Connection::State::writing) {  // a 100 Continue went out: the body may be here already
            watch(id, c);
            parse(id, c);
            return;
        }
        if (c.close_after || ++c.served >= limits.requests_per_connection) {
            ::shutdown(c.fd, SHUT_WR);
            c.state = Connection::State::draining;
            c.write_started = Clock::now();
            watch(id, c);
            return drain(id, c);
        }
        c.state = Connection::State::reading;
        watch(id, c);
        parse(id, c);  // a request the client sent before this answer
    }

    // A worker's answer, back on the reactor's thread.
    void finish(Done& d) {
        const auto it = connections.find(d.id);
        Response& res = d.response;
        if (it == connections.end()) {
            if (res.ended) res.ended();
            return;
        }
        Connection& c = it->second;
        const bool keep_alive = d.keep_alive && !res.close;
        if (res.next && !d.head_only) return stream(d.id, c, std::move(res));
        if (res.ended) res.ended();
        c.out = head_of(res, keep_alive, res.body.size(), false) + (d.head_only ? std::string() : res.body);
        c.written = 0;
        c.close_after = !keep_alive;
        c.state = Connection::State::writing;
        c.write_started = Clock::now();
        flush(d.id, c);
    }

    // The connection leaves the reactor for a thread of its own, which
    // writes each event as a chunk until the stream or its client ends.
    void stream(std::uint64_t id, Connection& c, Response res) {
        const int fd = c.fd;
        ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
        connections.erase(id);
        const int blocking = ::fcntl(fd, F_GETFL);
        ::fcntl(fd, F_SETFL, blocking & ~O_NONBLOCK);
        const auto ms = limits.write_time.count();
        timeval wait{static_cast<time_t>(ms / 1000), static_cast<suseconds_t>(ms % 1000 * 1000)};
        ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof wait);
        std::lock_guard lock(streams_mutex);
        reap_streams();
        Stream& s = streams.emplace_back();
        const auto end_now = res.ended;
        try {
            s.thread = std::thread([this, fd, res = std::move(res), ended = s.ended] {
                bool open = send_all(fd, head_of(res, false, 0, true));
                const Write write = [&](std::string_view data) {
                    if (!open || data.empty()) return open;
                    return open = send_all(fd, fmt::format("{:x}\r\n", data.size())) && send_all(fd, data) && send_all(fd, "\r\n");
                };
                try {
                    while (open && !stopping && res.next(write)) {
                    }
                } catch (...) {  // a stream that fails ends; the server goes on
                }
                if (open) send_all(fd, "0\r\n\r\n");
                ::close(fd);
                if (res.ended) res.ended();
                *ended = true;
            });
        } catch (const std::system_error&) {  // no thread to be had: the stream ends before it starts
            streams.pop_back();
            ::close(fd);
            if (end_now) end_now();
        }
    }

    // Joins the streams that have ended (streams_mutex held), so that a
    // page that reconnects all day leaves no threads behind.
    void reap_streams() {
        for (auto it = streams.begin(); it != streams.end();) {
            if (!*it->ended) {
                ++it;
                continue;
            }
            it->thread.join();
            it = streams.erase(it);
        }
    }

    void expire() {
        const Clock::time_point now = Clock::now();
        if (accept_paused && now - *accept_paused > std::chrono::milliseconds(100)) {
            accept_paused.reset();
            epoll_event ev{};
            ev.events = EPOLLIN;
            ev.data.u64 = kListen;
            ::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, listen_fd, &ev);
        }
        std::vector<std::uint64_t> late, idle;
        for (auto& [id, c] : connections) {
            if (c.state == Connection::State::reading && c.started && now - *c.started > limits.request_time) late.push_back(id);
            else if (c.state == Connection::State::reading && !c.started && now - c.last > limits.idle_time) idle.push_back(id);
            else if (c.state == Connection::State::writing && now - c.write_started > limits.write_time) idle.push_back(id);
            else if (c.state == Connection::State::draining && now - c.write_started > kDrainTime) idle.push_back(id);
        }
        for (const auto id : idle) close(id);
        for (const auto id : late)
            if (const auto it = connections.find(id); it != connections.end())
                answer_and_close(id, it->second, 408,
                                 fmt::format("the request took more than {} s to arrive", limits.request_time.count() / 1000.0));
    }

    void work() {
        for (;;) {
            Job job;
            {
                std::unique_lock lock(mutex);
                jobs_ready.wait(lock, [&] { return stopping || !jobs.empty(); });
                if (jobs.empty()) return;
                job = std::move(jobs.front());
                jobs.pop_front();
            }
            Done d{job.id, Response{}, job.keep_alive, job.head_only};
            answer(job.request, d.response);
            {
                std::lock_guard lock(mutex);
                done.push_back(std::move(d));
            }
            wake();
        }
    }

    void answer(Request& request, Response& res) {
        try {
            if (guard && guard(request, res)) return;
            std::vector<std::string> allowed;  // the methods of the routes the path matches
            for (const Route& route : routes) {
                std::smatch m;
                if (!std::regex_match(request.path, m, route.pattern)) continue;
                allowed.push_back(route.method);
                if (route.method == "GET") allowed.push_back("HEAD");
                if (route.method != request.method) continue;
                for (const auto& group : m) request.matches.push_back(group.str());
                return route.handler(request, res);
            }
            res = Response{};
            if (allowed.empty()) {
                refuse(res, 404, fmt::format("{} {}: no such page or call", request.method, request.path));
                res.status = 404;
                return;
            }
            // RFC 9110 15.5.6: a 405 names the methods the address takes.
            const std::string methods = fmt::format("{}", fmt::join(allowed, ", "));
            refuse(res, 405, fmt::format("{} {}: this address takes {}", request.method, request.path, methods));
            res.status = 405;
            res.headers.emplace_back("Allow", methods);
        } catch (const std::exception& e) {
            res = Response{};
            refuse(res, 500, std::string("the server could not answer: ") + e.what());
            res.status = 500;
        }
    }
};

Server::Server(const std::string& address, int port, Refuse refuse, Limits limits) : impl_(std::make_unique<Impl>()) {
    Impl& s = *impl_;
    s.limits = limits;
    s.refuse = std::move(refuse);
    const auto cannot = [&] {
        return Error(fmt::format("--host {} --port {}: cannot listen there (the port in use, or not this machine's address)", address, port));
    };
    sockaddr_storage at{};
    socklen_t size = 0;
    const std::string ip = address == "localhost" ? "127.0.0.1" : address;
    if (auto* v4 = reinterpret_cast<sockaddr_in*>(&at); ::inet_pton(AF_INET, ip.c_str(), &v4->sin_addr) == 1) {
        v4->sin_family = AF_INET;
        v4->sin_port = htons(static_cast<std::uint16_t>(port));
        size = sizeof *v4;
    } else if (auto* v6 = reinterpret_cast<sockaddr_in6*>(&at); ::inet_pton(AF_INET6, ip.c_str(), &v6->sin6_addr) == 1) {
        v6->sin6_family = AF_INET6;
        v6->sin6_port = htons(static_cast<std::uint16_t>(port));
        size = sizeof *v6;
    } else {
        throw cannot();
    }
    s.listen_fd = ::socket(at.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s.listen_fd < 0) throw cannot();
    // SO_REUSEADDR only: SO_REUSEPORT would let a second server share a
    // port in use instead of refusing it.
    const int yes = 1;
    ::setsockopt(s.listen_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(s.listen_fd, reinterpret_cast<sockaddr*>(&at), size) != 0 || ::listen(s.listen_fd, SOMAXCONN) != 0) throw cannot();
    if (::getsockname(s.listen_fd, reinterpret_cast<sockaddr*>(&at), &size) != 0) throw cannot();
    s.port = ntohs(at.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&at)->sin_port : reinterpret_cast<sockaddr_in6*>(&at)->sin6_port);

    s.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
    s.wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (s.epoll_fd < 0 || s.wake_fd < 0) throw Error("serve: cannot create its event queue (" + std::string(std::strerror(errno)) + ")");
    for (const auto& [fd, tag] : {std::pair{s.listen_fd, kListen}, std::pair{s.wake_fd, kWake}}) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = tag;
        ::epoll_ctl(s.epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    }
    // Each connection is a descriptor: take what the hard limit allows,
    // and keep some for streams, the cache and the sessions' files.
    rlimit files{};
    if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
        const rlim_t want = std::min<rlim_t>(files.rlim_max, limits.connections + 256);
        if (files.rlim_cur < want) {
            files.rlim_cur = want;
            ::setrlimit(RLIMIT_NOFILE, &files);
            ::getrlimit(RLIMIT_NOFILE, &files);
        }
        s.max_connections = std::min<std::size_t>(limits.connections, files.rlim_cur > 256 ? files.rlim_cur - 256 : files.rlim_cur / 2);
    } else {
        s.max_connections = std::min<std::size_t>(limits.connections, 512);
    }
}

Server::~Server() {
    stop();
}

int Server::port() const { return impl_->port; }
const Limits& Server::limits() const { return impl_->limits; }

void Server::route(const std::string& method, const std::string& pattern, Handler handler) {
    impl_->routes.push_back({method, std::regex(pattern), std::move(handler)});
}

void Server::guard(Guard guard) { impl_->guard = std::move(guard); }

void Server::run() {
    Impl& s = *impl_;
    for (int i = 0; i < s.limits.workers; ++i) s.workers.emplace_back([&s] { s.work(); });
    epoll_event events[256];
    while (!s.stopping) {
        const int n = ::epoll_wait(s.epoll_fd, events, 256, 100);
        for (int i = 0; i < n && !s.stopping; ++i) {
            const std::uint64_t id = events[i].data.u64;
            if (id == kListen) {
                s.accept_all();
            } else if (id == kWake) {
                std::uint64_t count;
                [[maybe_unused]] const ssize_t r = ::read(s.wake_fd, &count, sizeof count);
                std::vector<Done> done;
                {
                    std::lock_guard lock(s.mutex);
                    done.swap(s.done);
                }
                for (Done& d : done) s.finish(d);
            } else if (const auto it = s.connections.find(id); it != s.connections.end()) {
                Connection& c = it->second;
                if (events[i].events & (EPOLLERR | EPOLLHUP)) {
                    s.close(id);
                    continue;
                }
                if (events[i].events & EPOLLOUT) s.flush(id, c);
                if (const auto again = s.connections.find(id); again != s.connections.end() && (events[i].events & EPOLLIN))
                    s.read(id, again->second);
            }
        }
        s.expire();
    }
    // Ending: workers finish the requests they hold, streams see the flag.
    s.jobs_ready.notify_all();
    for (auto& w : s.workers) w.join();
    s.workers.clear();
    for (Done& d : s.done)
        if (d.response.ended) d.response.ended();
    s.done.clear();
    std::lock_guard lock(s.streams_mutex);
    for (auto& stream : s.streams) stream.thread.join();
    s.streams.clear();
    while (!s.connections.empty()) s.close(s.connections.begin()->first);
}

void Server::stop() {
    {
        // Under the workers' lock, so that none checks the flag, misses the
        // notify and sleeps through the end.
        std::lock_guard lock(impl_->mutex);
        impl_->stopping = true;
    }
    impl_->jobs_ready.notify_all();
    impl_->wake();
}

}  // namespace ffn::serve::http
