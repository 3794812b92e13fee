#include "core/thread_pool.h"

#include <chrono>
#include <string>
#include <system_error>

#include "core/error.h"

namespace ffn {

namespace {
thread_local bool t_in_task = false;

// Polls `done` for up to about 100 microseconds: long enough to bridge the gap
// between the back-to-back parallel calls of a training step, short enough
// that an idle pool stops burning a core almost at once.
template <class Done>
void spin_briefly(Done done) {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
    for (unsigned i = 1; !done(); ++i) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (i % 64 == 0 && std::chrono::steady_clock::now() > limit) return;
    }
}
}  // namespace

bool ThreadPool::in_task() { return t_in_task; }

std::size_t ThreadPool::hardware_threads() {
    const unsigned n = std::thread::hardware_concurrency();
    return n == 0 ? 1 : n;
}

ThreadPool::ThreadPool(std::size_t threads) {
    if (threads == 0) threads = hardware_threads();
    try {
        for (std::size_t i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
    } catch (const std::system_error& e) {
        // The system refused a thread (a ulimit, or memory): stop the ones
        // already running, which would otherwise outlive the pool.
        stop();
        throw Error("cannot start " + std::to_string(threads - 1) + " worker threads (" + e.what() +
                    "); ask for fewer with --threads");
    }
}

void ThreadPool::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
    workers_.clear();
}

ThreadPool::~ThreadPool() { stop(); }

// Takes indices one at a time until none are left. Called with mutex_ held.
void ThreadPool::drain() {
    std::unique_lock lock(mutex_, std::adopt_lock);
    while (next_ < count_) {
        const std::size_t i = next_++;
        lock.unlock();
        try {
            t_in_task = true;
            (*body_)(i);
            t_in_task = false;
        } catch (...) {
            t_in_task = false;
            std::lock_guard guard(mutex_);
            if (!error_) error_ = std::current_exception();
        }
        lock.lock();
    }
    lock.release();
}

void ThreadPool::worker_loop() {
    std::uint64_t seen = 0;
    for (;;) {
        spin_briefly([&] { return stopping_ || generation_ != seen; });
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        ++busy_;
        lock.release();
        drain();
        lock = std::unique_lock(mutex_, std::adopt_lock);
        if (--busy_ == 0) done_.notify_all();
    }
}

void ThreadPool::parallel_for(std::size_t n, const std::function<void(std::size_t)>& body) {
    if (n == 0) return;
    // One task leaves the workers idle: it runs here, not marked as a task,
    // so that work inside it that can go parallel (gemm, a permutation
    // test) may use every thread.
    if (n == 1 && !t_in_task) return body(0);
    std::unique_lock lock(mutex_);
    body_ = &body;
    next_ = 0;
    count_ = n;
    error_ = nullptr;
    ++generation_;
    wake_.notify_all();
    lock.release();
    drain();
    mutex_.unlock();  // drain returns holding it; the workers need it to finish
    spin_briefly([&] { return busy_ == 0; });
    lock = std::unique_lock(mutex_);
    done_.wait(lock, [&] { return busy_ == 0; });
    body_ = nullptr;
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace ffn
