#include "bench/timing.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "core/error.h"
#include "core/stats.h"

namespace ffn::bench {

std::vector<double> batch_seconds_per_call(const std::function<void()>& call, int repeats, double batch_seconds,
                                           const std::function<void()>& before_batch) {
    using clock = std::chrono::steady_clock;
    const auto t0 = clock::now();
    call();
    const double first = std::chrono::duration<double>(clock::now() - t0).count();
    const long batch = std::max(1L, static_cast<long>(batch_seconds / std::max(first, 1e-9)));
    std::vector<double> per_call;
    for (int r = 0; r < repeats; ++r) {
        if (before_batch) before_batch();
        const auto start = clock::now();
        for (long i = 0; i < batch; ++i) call();
        per_call.push_back(std::chrono::duration<double>(clock::now() - start).count() / static_cast<double>(batch));
    }
    return per_call;
}

double median_seconds_per_call(const std::function<void()>& call, int repeats, double batch_seconds) {
    return median(batch_seconds_per_call(call, repeats, batch_seconds));
}

Measured measure_in_child(const std::function<void()>& work, const char* what) {
    int pipe_fds[2];
    if (::pipe(pipe_fds) != 0) throw Error(std::string(what) + ": no pipe");
    std::fflush(nullptr);
    const pid_t pid = ::fork();
    if (pid < 0) throw Error(std::string(what) + ": cannot fork");
    if (pid == 0) {
        ::close(pipe_fds[0]);
        double seconds = -1;
        try {
            const auto start = std::chrono::steady_clock::now();
            work();
            seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        } catch (const std::exception& e) {
            std::fprintf(stderr, "ffn-lab: %s: %s\n", what, e.what());
        }
        (void)!::write(pipe_fds[1], &seconds, sizeof seconds);
        ::_exit(seconds < 0 ? 1 : 0);
    }
    ::close(pipe_fds[1]);
    double seconds = -1;
    const bool got = ::read(pipe_fds[0], &seconds, sizeof seconds) == static_cast<ssize_t>(sizeof seconds);
    ::close(pipe_fds[0]);
    int status = 0;
    struct rusage usage {};
    ::wait4(pid, &status, 0, &usage);
    if (!got || seconds < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) throw Error(std::string(what) + ": a measurement failed");
    return {seconds, static_cast<double>(usage.ru_maxrss) / 1024.0};
}

}  // namespace ffn::bench
