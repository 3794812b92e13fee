#!/usr/bin/env python3
"""Independent transcription of splitmix64 seeding + xoshiro256** 1.0, used to
write the known answers in test_rng.cpp. Prints the first three outputs for
key 42."""
M = (1 << 64) - 1


def mix64(z):
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def rotl(x, k):
    return ((x << k) | (x >> (64 - k))) & M


def xoshiro(key):
    x, s = key, []
    for _ in range(4):
        x = (x + 0x9E3779B97F4A7C15) & M
        s.append(mix64(x))
    while True:
        result = (rotl((s[1] * 5) & M, 7) * 9) & M
        t = (s[1] << 17) & M
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
        yield result


g = xoshiro(42)
for _ in range(3):
    print(hex(next(g)))
