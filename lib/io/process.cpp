#include "io/process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <thread>

#include "core/error.h"

extern char** environ;

namespace ffn::io {

namespace {
constexpr std::size_t kMaxOutput = std::size_t{64} << 20;

std::string fmt_silent(const std::string& program) {
    return program + ": no output and no exit for " + std::to_string(child_timeout()) +
           " s, so it was stopped (FFNLAB_CHILD_TIMEOUT sets the limit)";
}
}  // namespace

int child_timeout() {
    const char* text = std::getenv("FFNLAB_CHILD_TIMEOUT");
    if (!text) return 120;
    const std::string value = text;
    if (value.empty() || value.size() > 5 || value.find_first_not_of("0123456789") != std::string::npos ||
        std::stoi(value) < 1 || std::stoi(value) > 86400)
        throw Error("FFNLAB_CHILD_TIMEOUT='" + value + "': expected a whole number of seconds from 1 to 86400");
    return std::stoi(value);
}

bool program_exists(const std::string& program) {
    const auto runnable = [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
    };
    if (program.find('/') != std::string::npos) return runnable(program);
    const char* path = std::getenv("PATH");
    std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    for (std::size_t start = 0; start <= dirs.size();) {
        const std::size_t end = std::min(dirs.find(':', start), dirs.size());
        const std::string dir = dirs.substr(start, end - start);
        if (runnable((dir.empty() ? std::string(".") : dir) + "/" + program)) return true;
        start = end + 1;
    }
    return false;
}

Coprocess::Coprocess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env, bool quiet)
    : name_(args.empty() ? std::string() : args.front()) {
    if (args.empty()) throw Error("Coprocess: no program to run");
    child_timeout();  // a bad $FFNLAB_CHILD_TIMEOUT is refused before anything runs
    std::vector<std::string> environment;
    for (char** e = environ; *e; ++e) {
        const std::string entry = *e;
        if (!env.contains(entry.substr(0, entry.find('=')))) environment.push_back(entry);
    }
    for (const auto& [name, value] : env) environment.push_back(name + "=" + value);
    std::vector<char*> argv, envp;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    for (const auto& e : environment) envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);

    // Close-on-exec, so that no end outlives the exec in the child (its
    // stdin and stdout are dup2'd copies): a grandchild holding a write end
    // would keep a read here waiting.
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0) throw Error("cannot make a pipe to run " + args.front());
    if (::pipe2(from_child, O_CLOEXEC) != 0) {
        ::close(to_child[0]);
        ::close(to_child[1]);
        throw Error("cannot make a pipe to run " + args.front());
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], STDOUT_FILENO);
    if (quiet) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    const int spawned = posix_spawnp(&pid_, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    in_fd_ = to_child[1];
    out_fd_ = from_child[0];
    if (spawned != 0) {
        pid_ = -1;
        ::close(in_fd_);
        ::close(out_fd_);
        in_fd_ = out_fd_ = -1;
        throw Error(args.front() + ": cannot run it (" + std::string(std::strerror(spawned)) + ")");
    }
}

Coprocess::~Coprocess() {
    if (pid_ > 0) terminate();
}

void Coprocess::close_input() {
    if (in_fd_ >= 0) {
        ::close(in_fd_);
        in_fd_ = -1;
    }
}

int Coprocess::terminate() {
    if (pid_ > 0) ::kill(pid_, SIGKILL);
    close_input();
    if (out_fd_ >= 0) {
        ::close(out_fd_);
        out_fd_ = -1;
    }
    buffer_.clear();
    return wait(/*killed=*/true);
}

bool Coprocess::write_line(const std::string& line) {
    if (in_fd_ < 0) return false;
    // A program that has ended would raise SIGPIPE, which kills this
    // process: held back on this thread for the write, then taken if raised.
    sigset_t pipe_signal, previous;
    sigemptyset(&pipe_signal);
    sigaddset(&pipe_signal, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_signal, &previous);
    const std::string data = line + "\n";
    bool ok = true;
    for (std::size_t done = 0; done < data.size() && ok;) {
        // A program that stops reading would block the write for ever.
        pollfd ready{in_fd_, POLLOUT, 0};
        const int polled = ::poll(&ready, 1, child_timeout() * 1000);
        if (polled == 0) {
            pthread_sigmask(SIG_SETMASK, &previous, nullptr);
            stop_silent();
        }
        if (polled < 0) continue;  // EINTR
        // At most PIPE_BUF bytes, which a pipe that polled writable takes whole.
        const ssize_t n = ::write(in_fd_, data.data() + done, std::min<std::size_t>(data.size() - done, PIPE_BUF));
        if (n > 0) done += static_cast<std::size_t>(n);
        else if (n < 0 && errno != EINTR) ok = false;
    }
    if (!ok) {
        const timespec none{0, 0};
        sigtimedwait(&pipe_signal, nullptr, &none);  // the pending SIGPIPE, if the write raised one
    }
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return ok;
}

void Coprocess::stop_silent() {
    terminate();
    throw Error(fmt_silent(name_));
}

bool Coprocess::fill() {
    if (out_fd_ < 0) return false;
    char buf[4096];
    for (;;) {
        pollfd ready{out_fd_, POLLIN, 0};
        const int polled = ::poll(&ready, 1, child_timeout() * 1000);
        if (polled < 0 && errno == EINTR) continue;
        if (polled == 0) stop_silent();
        const ssize_t n = ::read(out_fd_, buf, sizeof buf);
        if (n > 0) {
            total_ += static_cast<std::size_t>(n);
            if (total_ > kMaxOutput) break;
            buffer_.append(buf, static_cast<std::size_t>(n));
            return true;
        }
        if (n == 0 || errno != EINTR) break;
    }
    if (total_ > kMaxOutput && pid_ > 0) ::kill(pid_, SIGKILL);
    ::close(out_fd_);
    out_fd_ = -1;
    return false;
}

std::optional<std::string> Coprocess::read_line() {
    for (;;) {
        const auto end = buffer_.find('\n');
        if (end != std::string::npos) {
            std::string line = buffer_.substr(0, end);
            buffer_.erase(0, end + 1);
            return line;
        }
        if (!fill()) break;
    }
    if (buffer_.empty()) return std::nullopt;
    std::string last;
    last.swap(buffer_);
    return last;
}

int Coprocess::finish(std::string* rest_of_output) {
    close_input();
    while (fill()) {
    }
    if (rest_of_output) rest_of_output->swap(buffer_);
    buffer_.clear();
    return wait();
}

int Coprocess::wait(bool killed) {
    if (pid_ <= 0) return 128;
    int status = 0;
    pid_t waited;
    // Polled, so that a program that closed its output but never ends is
    // stopped like one that never writes.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(child_timeout());
    while ((waited = ::waitpid(pid_, &status, killed ? 0 : WNOHANG)) == 0 || (waited < 0 && errno == EINTR)) {
        if (std::chrono::steady_clock::now() > deadline) stop_silent();
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    pid_ = -1;
    if (waited < 0) return 128;  // no status to read (SIGCHLD ignored, say): not a success
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

ProgramResult run_program(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                          bool quiet) {
    Coprocess program(args, env, quiet);
    ProgramResult result;
    result.status = program.finish(&result.output);
    return result;
}

}  // namespace ffn::io
