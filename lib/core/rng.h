#pragma once
// The one random number generator of ffn-lab, specified to the bit so that a
// (seed, stream) pair gives the same numbers on every platform and compiler.
//
// Generator: xoshiro256** 1.0 (Blackman and Vigna, "Scrambled linear
// pseudorandom number generators", 2018), state seeded by four outputs of
// splitmix64 from the stream key. Transforms are our own, never
// std::*_distribution (whose output differs between standard libraries):
//   uniform01: top 53 bits / 2^53, in [0, 1)
//   normal:    Box-Muller, both outputs used; u1 is mapped into (0, 1] so
//              log(u1) is finite; log, sin and cos are ffn::math's, whose
//              bits do not depend on the CPU or the C library.
#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <string_view>
#include <utility>

#include "core/hash.h"
#include "core/math.h"

namespace ffn {

class Rng {
public:
    explicit Rng(std::uint64_t key) {
        std::uint64_t x = key;
        for (auto& s : state_) {
            x += 0x9e3779b97f4a7c15ull;  // splitmix64 increment
            s = mix64(x);
        }
    }

    // A stream per (seed, run id, purpose): changing one part of a config does
    // not reshuffle the randomness another part uses.
    static Rng stream(std::uint64_t seed, std::uint64_t run_id, std::string_view purpose) { return Rng(stream_key(seed, run_id, purpose)); }
    // The key such a stream starts from, for a counter-based generator
    // keyed the same way (train/toy_model.h's inputs).
    static std::uint64_t stream_key(std::uint64_t seed, std::uint64_t run_id, std::string_view purpose) {
        return hash_combine(hash_combine(seed, run_id), fnv1a64(purpose));
    }

    std::uint64_t next_u64() {
        const std::uint64_t result = rotl(state_[1] * 5, 7) * 9;
        const std::uint64_t t = state_[1] << 17;
        state_[2] ^= state_[0];
        state_[3] ^= state_[1];
        state_[1] ^= state_[2];
        state_[0] ^= state_[3];
        state_[2] ^= t;
        state_[3] = rotl(state_[3], 45);
        return result;
    }

    double uniform01() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
    double uniform(double lo, double hi) { return lo + (hi - lo) * uniform01(); }

    double normal() {
        if (has_spare_) {
            has_spare_ = false;
            return spare_;
        }
        const double u1 = 1.0 - uniform01();  // (0, 1]
        const double u2 = uniform01();
        const double r = std::sqrt(-2.0 * math::log(u1));
        const double theta = 2.0 * std::numbers::pi * u2;
        spare_ = r * math::sin(theta);
        has_spare_ = true;
        return r * math::cos(theta);
    }
    double normal(double mean, double stddev) { return mean + stddev * normal(); }

    // Fisher-Yates with our own draws: the same seed gives the same order on
    // every machine (std::shuffle's is the library's choice).
    template <class Sequence>
    void shuffle(Sequence& v) {
        for (std::size_t i = v.size(); i-- > 1;) std::swap(v[i], v[static_cast<std::size_t>(uniform01() * static_cast<double>(i + 1))]);
    }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

    std::array<std::uint64_t, 4> state_{};
    double spare_ = 0.0;
    bool has_spare_ = false;
};

}  // namespace ffn
