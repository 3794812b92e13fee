#include <doctest/doctest.h>

#include <atomic>
#include <stdexcept>
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
