#include "io/process.h"

#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include "core/error.h"

extern char** environ;

namespace ffn::io {

namespace {
constexpr std::size_t kMaxOutput = std::size_t{64} << 20;
}  // namespace

Coprocess::Coprocess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env, bool quiet) {
    if (args.empty()) throw Error("Coprocess: no program to run");
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
    return wait();
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
        const ssize_t n = ::write(in_fd_, data.data() + done, data.size() - done);
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

bool Coprocess::fill() {
    if (out_fd_ < 0) return false;
    char buf[4096];
    for (;;) {
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

int Coprocess::wait() {
    if (pid_ <= 0) return 128;
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
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
