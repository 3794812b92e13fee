#pragma once
// The hot elementary functions of ffn::math (exp, tanh, erfc, sigmoid), as
// inline code without branches: special cases are selected, not jumped to.
// A loop over an array of them vectorises (nn/activation_loops.h), and a
// vector lane computes exactly what the scalar ffn::math function computes,
// which is these same lines; so activations have the same bits whatever the
// vector width. (Compile loops over them with -fno-trapping-math, or GCC
// will not turn the selects into blends.)
//
// Internal linkage on purpose, as in gemm/kernels/tile_kernel.h: this header
// is compiled into nn/activation_avx2.cpp with -mavx2, and an inline
// function with external linkage could have that AVX2 copy picked by the
// linker for every file, which a CPU without AVX2 cannot run.
#include <bit>
#include <cstddef>
#include <cstdint>

#include "core/math_constants.inc"

namespace ffn::math::kernels {
namespace {

// c[0] + x (c[1] + x (c[2] + ...)), unrolled at compile time.
template <std::size_t N, std::size_t I = 0>
inline double horner(const double (&c)[N], double x) {
    if constexpr (I + 1 == N) return c[I];
    else return horner<N, I + 1>(c, x) * x + c[I];
}

// b when a is NaN: a clamped NaN becomes a harmless number, and the NaN is
// restored by the caller's final select.
inline double min(double a, double b) { return a < b ? a : b; }
inline double max(double a, double b) { return a > b ? a : b; }
inline double abs(double a) { return std::bit_cast<double>(std::bit_cast<std::uint64_t>(a) & ~(1ull << 63)); }

// 2^k for k in the normal range [-1022, 1023], from its bits.
inline double power_of_two(std::int64_t k) { return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52); }

// exp(r) - 1 for |r| <= ln(2)/2: r + r^2 (1/2 + r/6 + ...).
inline double expm1_reduced(double r) { return r + (r * r) * horner(constants::kExpm1Taylor, r); }

// x = k ln2 + r with |r| <= ln(2)/2, for |x| < 2^50: k by adding 1.5 * 2^52,
// which rounds x/ln2 to the nearest integer (ties to even) and leaves it in
// the low bits; k ln2's head is exact (a 32-bit head times k < 2^11).
struct Reduced {
    double r;
    std::int64_t k;
};
inline Reduced reduce_ln2(double x) {
    constexpr double shifter = 0x1.8p52;
    const double shifted = x * constants::kInvLn2 + shifter;
    const double k = shifted - shifter;
    return {(x - k * constants::kLn2[0]) - k * constants::kLn2[1],
            std::bit_cast<std::int64_t>(shifted) - std::bit_cast<std::int64_t>(shifter)};
}

inline double exp(double x) {
    // Clamped so that k stays small; exp(-746) rounds to 0 and exp(710)
    // overflows, as for every x beyond.
    const auto [r, k] = reduce_ln2(max(min(x, 710.0), -746.0));
    // 2^k in two factors, each a normal number: one rounding at most, only
    // when the result is subnormal (as ldexp).
    const std::int64_t k1 = k >> 1;
    const double y = (1 + expm1_reduced(r)) * power_of_two(k1) * power_of_two(k - k1);
    return x != x ? x : y;
}

// tanh(x) = t / (t + 2) with t = exp(2|x|) - 1, which for |x| <= 22 is
// 2^k e + (2^k - 1), e = exp(r) - 1, both parts exact (k <= 64). Beyond 22,
// tanh rounds to +-1, and so does this formula at the clamp.
inline double tanh(double x) {
    const double a = min(abs(x), 22.0);
    const auto [r, k] = reduce_ln2(2 * a);
    const double two_k = power_of_two(k);
    const double t = two_k * expm1_reduced(r) + (two_k - 1);
    const double y = t / (t + 2);  // >= 0: x's sign bit put on it keeps tanh(-0) = -0
    const double signed_y = std::bit_cast<double>(std::bit_cast<std::uint64_t>(y) | (std::bit_cast<std::uint64_t>(x) & (1ull << 63)));
    return x != x ? x : signed_y;
}

// exp(-a^2) for 0 <= a <= 28, with a^2 split exactly into hi + lo
// (Veltkamp: a's head has 26 bits, so hi = head^2 is exact), since rounding
// a^2 first would put an error of a^2 units into the result.
inline double exp_minus_square(double a) {
    const double c = 134217729.0 * a;  // 2^27 + 1
    const double head = c - (c - a);
    const double tail = a - head;
    const double m = -((2 * head + tail) * tail);  // -lo, |lo| < 2^-12
    const double exp_m = 1 + m * (1 + m * (0.5 + m * (1.0 / 6 + m * (1.0 / 24))));  // m^5/120 < 2^-70
    return exp(-(head * head)) * exp_m;
}

// erfc(x) = exp(-a^2) t P(s), a = |x|, t = 2 / (2 + a), s = 2t - 1, one
// polynomial for every a (lib/core/math_constants.py); 2 - that for x < 0.
// Beyond a = 28, erfc is below the least subnormal, as is this at the clamp.
// exp(-x^2) comes along: GELU's derivative needs both.
struct ErfcAndGaussian {
    double erfc;
    double gaussian;  // exp(-x^2)
};
inline ErfcAndGaussian erfc_and_gaussian(double x) {
    const double a = min(abs(x), 28.0);
    const double t = 2 / (2 + a);
    const double gaussian = exp_minus_square(a);
    const double tail = gaussian * (t * horner(constants::kErfcxPolynomial, 2 * t - 1));
    if (x != x) return {x, x};
    return {x < 0 ? 2 - tail : tail, gaussian};
}

inline double erfc(double x) { return erfc_and_gaussian(x).erfc; }

// Below x = -709.78 exp(-x) overflows and this is 0, where the true value
// is below 1e-308.
inline double sigmoid(double x) { return 1 / (1 + exp(-x)); }

}  // namespace
}  // namespace ffn::math::kernels
