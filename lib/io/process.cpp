#include "io/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include "core/error.h"

extern char** environ;

namespace ffn::io {

ProgramResult run_program(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
                          bool quiet) {
    if (args.empty()) throw Error("run_program: no program");
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

    int pipe_fds[2];
    // Close-on-exec, so that neither end outlives the exec in the child
    // (its stdout is the dup2'd copy): a grandchild holding the write end
    // would keep the read below waiting.
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw Error("cannot make a pipe to run " + args.front());
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    if (quiet) posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(pipe_fds[1]);
    if (spawned != 0) {
        ::close(pipe_fds[0]);
        throw Error(args.front() + ": cannot run it (" + std::string(std::strerror(spawned)) + ")");
    }
    ProgramResult result;
    constexpr std::size_t kMaxOutput = std::size_t{64} << 20;  // a program that never stops writing is cut off here
    char buf[4096];
    for (;;) {
        const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
        if (n > 0) {
            if (result.output.size() < kMaxOutput) result.output.append(buf, static_cast<std::size_t>(n));
            else ::kill(pid, SIGKILL);
        } else if (n == 0 || errno != EINTR) {
            break;
        }
    }
    ::close(pipe_fds[0]);
    int status = 0;
    pid_t waited;
    while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
    }
    if (waited != pid) {  // no status to read (SIGCHLD ignored, say): not a success
        result.status = 128;
        return result;
    }
    result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return result;
}

}  // namespace ffn::io
