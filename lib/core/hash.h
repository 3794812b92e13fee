#pragma once
// Stable 64-bit hashes: run ids and RNG stream keys must not depend on the
// standard library (std::hash differs between implementations).
#include <cstdint>
#include <string_view>

namespace ffn {

// FNV-1a, 64-bit (Fowler, Noll, Vo). `h` carries a hash over in pieces:
// fnv1a64(b, fnv1a64(a)) == fnv1a64(a + b).
inline std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
    for (unsigned char c : bytes) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return h;
}

// splitmix64 finaliser (Steele, Lea, Flood 2014): a bijective mixer, used to
// combine keys into well-spread seeds.
inline std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

inline std::uint64_t hash_combine(std::uint64_t a, std::uint64_t b) {
    return mix64(a ^ (mix64(b) + 0x9e3779b97f4a7c15ull + (a << 6) + (a >> 2)));
}

}  // namespace ffn
