#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/thread_pool.h"

TEST_CASE("parallel_for calls every index exactly once for any pool size") {
    for (std::size_t threads : {1, 2, 4}) {
        ffn::ThreadPool pool(threads);
        CHECK(pool.size() == threads);
        for (std::size_t n : {0, 1, 3, 1000}) {
            std::vector<std::atomic<int>> hits(n);
            pool.parallel_for(n, [&](std::size_t i) { hits[i]++; });
            for (auto& h : hits) CHECK(h.load() == 1);
        }
    }
}

TEST_CASE("an exception in a body reaches the caller and the pool stays usable") {
    ffn::ThreadPool pool(2);
    CHECK_THROWS_AS(pool.parallel_for(10, [](std::size_t i) { if (i == 5) throw std::runtime_error("boom"); }),
                    std::runtime_error);
    std::atomic<int> count{0};
    pool.parallel_for(10, [&](std::size_t) { count++; });
    CHECK(count.load() == 10);
}

// Workers poll for about 100 us before sleeping: calls that follow each other
// at once meet a polling worker, calls after a pause a sleeping one. Both must
// hand out every index once, and a call must not return before all of its
// indices ran, even when a worker's index outlasts the caller's polling.
TEST_CASE("back-to-back and spaced-out calls each run every index once") {
    ffn::ThreadPool pool(3);
    std::atomic<long> total{0};
    const auto caller = std::this_thread::get_id();
    for (int call = 0; call < 2000; ++call) {
        std::atomic<int> started{0}, done{0};
        pool.parallel_for(3, [&](std::size_t i) {
            started++;
            // Index 0 waits (10 ms at most) for another index to start, so a
            // worker, not only the caller, takes part in the call.
            const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(10);
            while (i == 0 && started.load() < 2 && std::chrono::steady_clock::now() < until) {
            }
            if (std::this_thread::get_id() != caller && call % 10 == 0)
                std::this_thread::sleep_for(std::chrono::microseconds(300));
            total += static_cast<long>(i) + 1;
            done++;
        });
        REQUIRE(done.load() == 3);
        if (call % 500 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    CHECK(total.load() == 2000L * 6);
}
