// The toy model of superposition's engines: the hand-written gradients
// against finite differences of the loss, the fused pass against the
// products, a stack of instances against each instance alone, and the
// counter-based draws and the fused pass the same in every kernel family.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "core/rng.h"
#include "gemm/gemm.h"
#include "support.h"
#include "train/toy_model.h"

using namespace ffn;

namespace {

using namespace ffn::train::toy_model;

// A model's weights, its batch of step `step` drawn as the fused pass draws
// it, and both engines' gradients on that batch.
template <class T>
struct Case {
    Shape shape;
    std::vector<T> W, b, x;
    std::vector<double> importance;
    std::uint64_t key = 0, step = 0;
    double density = 0.3;

    Case(Shape s, std::uint64_t seed) : shape(s), W(s.instances * s.m * s.n), b(s.instances * s.n) {
        Rng rng(seed);
        for (T& v : W) v = static_cast<T>(0.4 * rng.normal());
        for (T& v : b) v = static_cast<T>(0.05 * rng.normal());
        for (std::size_t i = 0; i < s.n; ++i) importance.push_back(std::pow(0.8, static_cast<double>(i)));
        key = rng.next_u64();
        step = rng.next_u64() % 1000;
    }
    std::vector<std::uint64_t> keys() const {
        std::vector<std::uint64_t> k(shape.instances);
        for (std::size_t r = 0; r < k.size(); ++r) k[r] = key + 977 * r;
        return k;
    }
    std::pair<std::vector<T>, std::vector<T>> fused() const {
        std::vector<T> gW(W.size()), gb(b.size());
        const auto k = keys();
        fused_gradient<T>({shape, step, k.data(), density, importance.data(), W.data(), b.data(), gW.data(), gb.data()});
        return {gW, gb};
    }
    // Instance r's batch, by the scalar definition of the draws.
    std::vector<T> batch(std::size_t r) const {
        std::vector<T> out(shape.n * shape.batch);
        for (std::size_t i = 0; i < shape.n; ++i)
            for (std::size_t s = 0; s < shape.batch; ++s)
                out[i * shape.batch + s] = input_of<T>(word(keys()[r], counter(step, i, s, shape)), static_cast<T>(density));
        return out;
    }
};

}  // namespace

TEST_CASE("toy_model: the vector draws are the scalar definition's, in every family") {
    // 37 samples: two full vectors and a tail of 5.
    const Shape s{3, 0, 37};
    const std::uint64_t key = 0x1234567890abcdefull, step = 41;
    ffn::test::for_each_isa([&](ffn::Isa) {
        std::vector<float> xf(s.n * s.batch);
        std::vector<double> xd(s.n * s.batch);
        draw_batch<float>({key, step, s.n, s.batch, 0.25}, xf.data());
        draw_batch<double>({key, step, s.n, s.batch, 0.25}, xd.data());
        std::size_t active = 0;
        for (std::size_t i = 0; i < s.n; ++i)
            for (std::size_t t = 0; t < s.batch; ++t) {
                const std::uint64_t w = word(key, counter(step, i, t, s));
                CHECK(std::bit_cast<std::uint32_t>(xf[i * s.batch + t]) == std::bit_cast<std::uint32_t>(input_of<float>(w, 0.25f)));
                CHECK(std::bit_cast<std::uint64_t>(xd[i * s.batch + t]) == std::bit_cast<std::uint64_t>(input_of<double>(w, 0.25)));
                CHECK(xd[i * s.batch + t] < 1.0);
                active += xd[i * s.batch + t] > 0;
            }
        // About a quarter active: 111 draws, 27.75 expected, 4.6 its sd.
        CHECK(active >= 14);
        CHECK(active <= 42);
    });
    // The word is SplitMix64 started at the key: its first output is mix64(key + gamma).
    CHECK(word(key, 0) == mix64(key + 0x9e3779b97f4a7c15ull));
}

TEST_CASE("toy_model: the fused pass is the products' gradient on the same batch, to rounding") {
    // float64 and n m = 21 weights: the two engines sum the batch in other
    // orders, so they agree to a few ulps of the largest term, far inside
    // 1e-12 of the gradient's scale; a sign or index slip errs by O(1).
    Case<double> c({7, 3, 50}, 5);
    const auto [gW, gb] = c.fused();
    const std::vector<double> x = c.batch(0);
    std::vector<double> gW2(gW.size()), gb2(gb.size());
    Workspace<double> work;
    gradient<double>(c.shape, c.W.data(), c.b.data(), x.data(), c.importance.data(), gW2.data(), gb2.data(), work);
    double largest = 0;
    for (std::size_t k = 0; k < gW.size(); ++k) {
        CHECK(gW[k] == doctest::Approx(gW2[k]).epsilon(1e-12).scale(1e-3));
        largest = std::max(largest, std::fabs(gW[k]));
    }
    for (std::size_t i = 0; i < gb.size(); ++i) CHECK(gb[i] == doctest::Approx(gb2[i]).epsilon(1e-12).scale(1e-3));
    CHECK(largest > 1e-3);  // a gradient worth comparing
}

TEST_CASE("toy_model: the fused pass matches central differences of the loss") {
    Case<double> c({4, 2, 37}, 9);
    const auto [gW, gb] = c.fused();
    const std::vector<double> x = c.batch(0);
    // As in the test of the products' gradient below: a step of 1e-6, a
    // bound of 1e-7 (no pre-activation is within 1e-4 of the kink).
    const double h = 1e-6;
    auto at = [&](std::vector<double>& v, std::size_t k) {
        const double keep = v[k];
        v[k] = keep + h;
        const double up = loss(c.shape, c.W.data(), c.b.data(), x.data(), c.importance.data());
        v[k] = keep - h;
        const double down = loss(c.shape, c.W.data(), c.b.data(), x.data(), c.importance.data());
        v[k] = keep;
        return (up - down) / (2 * h);
    };
    for (std::size_t k = 0; k < gW.size(); ++k) CHECK(gW[k] == doctest::Approx(at(c.W, k)).epsilon(1e-7).scale(1));
    for (std::size_t k = 0; k < gb.size(); ++k) CHECK(gb[k] == doctest::Approx(at(c.b, k)).epsilon(1e-7).scale(1));
}

TEST_CASE("toy_model: the fused pass gives every instance of a stack its bits alone, the same in every family") {
    // float32, the shapes of configs (a) and (b) and one with a tail of
    // samples, three instances with their own keys.
    for (const Shape one : {Shape{5, 2, 1024}, Shape{20, 5, 1000}, Shape{2, 1, 19}}) {
        CAPTURE(one.n);
        Case<float> c({one.n, one.m, one.batch, 3}, 3);
        std::pair<std::vector<float>, std::vector<float>> reference;
        ffn::test::for_each_isa([&](ffn::Isa isa) {
            const auto got = c.fused();
            if (isa == ffn::Isa::ref) reference = got;
            CHECK(std::memcmp(got.first.data(), reference.first.data(), got.first.size() * sizeof(float)) == 0);
            CHECK(std::memcmp(got.second.data(), reference.second.data(), got.second.size() * sizeof(float)) == 0);
            for (std::size_t r = 0; r < 3; ++r) {
                Case<float> alone({one.n, one.m, one.batch, 1}, 3);
                alone.key = c.keys()[r];
                alone.step = c.step;
                alone.W.assign(c.W.begin() + r * one.m * one.n, c.W.begin() + (r + 1) * one.m * one.n);
                alone.b.assign(c.b.begin() + r * one.n, c.b.begin() + (r + 1) * one.n);
                const auto [gW, gb] = alone.fused();
                CHECK(std::memcmp(gW.data(), got.first.data() + r * gW.size(), gW.size() * sizeof(float)) == 0);
                CHECK(std::memcmp(gb.data(), got.second.data() + r * gb.size(), gb.size() * sizeof(float)) == 0);
            }
        });
        CHECK(*std::max_element(reference.first.begin(), reference.first.end()) != 0.0f);
    }
}

TEST_CASE("toy_model: the hand-written gradient matches central differences of the loss") {
    using namespace ffn::train::toy_model;
    // float64, n = 4, m = 2, 37 samples (not a multiple of blocked_sum's 16).
    const Shape s{4, 2, 37};
    Rng rng(7);
    std::vector<double> W(s.m * s.n), b(s.n), x(s.n * s.batch), gW(W.size()), gb(b.size());
    const std::vector<double> importance = {1, 0.9, 0.81, 0.729};
    for (double& v : W) v = rng.normal();
    for (double& v : b) v = 0.1 * rng.normal();
    for (double& v : x) v = rng.uniform01() < 0.5 ? rng.uniform01() : 0.0;
    Workspace<double> work;
    gradient<double>(s, W.data(), b.data(), x.data(), importance.data(), gW.data(), gb.data(), work);
    // A step of 1e-6 keeps every pre-activation on its side of the ReLU's
    // kink (none is within 1e-4 of 0 here), so the difference quotient
    // errs by O(h^2) and rounding, about 1e-10 of the loss's scale; the
    // bound is 1e-7.
    const double h = 1e-6;
    auto at = [&](std::vector<double>& v, std::size_t k) {
        const double keep = v[k];
        v[k] = keep + h;
        const double up = loss(s, W.data(), b.data(), x.data(), importance.data());
        v[k] = keep - h;
        const double down = loss(s, W.data(), b.data(), x.data(), importance.data());
        v[k] = keep;
        return (up - down) / (2 * h);
    };
    double largest = 0;
    for (std::size_t k = 0; k < W.size(); ++k) {
        CHECK(gW[k] == doctest::Approx(at(W, k)).epsilon(1e-7).scale(1));
        largest = std::max(largest, std::fabs(gW[k]));
    }
    for (std::size_t k = 0; k < b.size(); ++k) CHECK(gb[k] == doctest::Approx(at(b, k)).epsilon(1e-7).scale(1));
    CHECK(largest > 1e-3);  // a gradient worth checking
}

// Bitwise: each instance of a stack gets the gradient it gets alone, in
// float32, on batches long enough for the gemm's packed kernels, with the
// stack's instances spread over two threads.
TEST_CASE("toy_model: a stack of instances gets each instance's gradient alone, bit for bit") {
    using namespace ffn::train::toy_model;
    const std::size_t I = 3;
    const Shape one{20, 5, 1000}, stack{20, 5, 1000, I};
    const std::size_t w_size = one.m * one.n, x_size = one.n * one.batch;
    Rng rng(11);
    std::vector<float> W(I * w_size), b(I * one.n), x(I * x_size), gW(W.size()), gb(b.size());
    std::vector<double> importance(one.n);
    for (std::size_t i = 0; i < one.n; ++i) importance[i] = std::pow(0.7, static_cast<double>(i));
    for (float& v : W) v = static_cast<float>(0.3 * rng.normal());
    for (float& v : b) v = static_cast<float>(0.1 * rng.normal());
    for (float& v : x) v = rng.uniform01() < 0.2 ? static_cast<float>(rng.uniform01()) : 0.0f;
    Workspace<float> work;
    const std::size_t before = gemm::max_threads();
    gemm::set_max_threads(2);
    gradient<float>(stack, W.data(), b.data(), x.data(), importance.data(), gW.data(), gb.data(), work);
    gemm::set_max_threads(before);
    for (std::size_t r = 0; r < I; ++r) {
        CAPTURE(r);
        std::vector<float> gW1(w_size), gb1(one.n);
        gradient<float>(one, W.data() + r * w_size, b.data() + r * one.n, x.data() + r * x_size, importance.data(),
                        gW1.data(), gb1.data(), work);
        CHECK(std::memcmp(gW1.data(), gW.data() + r * w_size, w_size * sizeof(float)) == 0);
        CHECK(std::memcmp(gb1.data(), gb.data() + r * one.n, one.n * sizeof(float)) == 0);
        CHECK(*std::max_element(gW1.begin(), gW1.end()) != 0.0f);  // a gradient worth comparing
    }
}
