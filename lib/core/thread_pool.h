#pragma once
// A persistent pool of worker threads with one operation: parallel_for over an
// index range. Callers make results independent of scheduling by writing each
// index's result to its own slot; the pool never reorders arithmetic.
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <cstdint>
#include <utility>
#include <vector>

namespace ffn {

class ThreadPool {
public:
    // threads == 0 means all hardware threads. The calling thread works too,
    // so a pool of n threads starts n - 1 workers.
    explicit ThreadPool(std::size_t threads = 0);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    std::size_t size() const { return workers_.size() + 1; }

    // Calls body(i) for every i in [0, n), each exactly once, spread over the
    // threads; returns when all are done. The first exception thrown by a body
    // is rethrown here after the others finish.
    void parallel_for(std::size_t n, const std::function<void(std::size_t)>& body);

    static std::size_t hardware_threads();

    // True on a thread that is running a parallel_for body of any pool: code
    // that could itself go parallel (gemm) stays serial there instead of
    // oversubscribing the cores.
    static bool in_task();

private:
    void worker_loop();
    void stop();  // ends and joins every worker
    void drain();

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_, done_;
    const std::function<void(std::size_t)>* body_ = nullptr;
    std::size_t next_ = 0, count_ = 0;
    // Written under mutex_; atomic so that waiters can spin on them briefly
    // before sleeping (a futex wake costs tens of microseconds, a whole
    // parallel gemm of 512^3 about 700).
    std::atomic<std::size_t> busy_{0};
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<bool> stopping_{false};
    std::exception_ptr error_;
};

}  // namespace ffn
