#pragma once
// The hot elementary functions of ffn::math (exp, tanh, erfc, sigmoid), as
// inline code without branches: special cases are selected, not jumped to.
// A loop over an array of them vectorises (nn/kernels/activation_loops.h), and a
// vector lane computes exactly what the scalar ffn::math function computes,
// which is these same lines; so activations have the same bits whatever the
// vector width. (Compile loops over them with -fno-trapping-math, or GCC
// will not turn the selects into blends.)
//
// Internal linkage on purpose, as in gemm/kernels/tile_kernel.h: this header
// is compiled into nn/kernels/avx2/activation_avx2.cpp with -mavx2, and an inline
// function with external linkage could have that AVX2 copy picked by the
// linker for every file, which a CPU without AVX2 cannot run.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

#include "core/math_constants.inc"

#include <immintrin.h>  // SSE2 for every build; AVX, FMA and AVX-512 where the build has them

// GCC and clang warn that a vector argument's ABI depends on -mavx: these
// functions have internal linkage and never cross a build's boundary.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ffn::math::kernels {
namespace {

// What the formulas below need to know of double and float: the integer of
// the same size, the exponent's bias, the constants' tables, and where each
// function saturates. The float versions exist for the float32 activations
// (8 lanes to a vector instead of 4, shorter series); they follow the
// double ones line by line.
template <class T>
struct Format;

template <>
struct Format<double> {
    using Int = std::int64_t;
    using Bits = std::uint64_t;
    static constexpr int kMantissaBits = 52;
    static constexpr Int kBias = 1023;
    static constexpr double kShifter = 0x1.8p52;  // 1.5 * 2^52: adding it rounds to an integer
    static constexpr auto& kLn2 = constants::kLn2;  // a 32-bit head: k ln2's head exact for |k| < 2^21
    static constexpr double kInvLn2 = constants::kInvLn2;
    static constexpr auto& kExpm1Taylor = constants::kExpm1Taylor;
    static constexpr auto& kErfcxPolynomial = constants::kErfcxPolynomial;
    static constexpr double kExpMax = 710;    // exp overflows beyond
    static constexpr double kExpMin = -746;   // and rounds to 0 below
    static constexpr double kTanhOne = 22;    // tanh rounds to +-1 beyond
    static constexpr double kErfcZero = 28;   // erfc below the least subnormal beyond
    static constexpr double kVeltkamp = 134217729.0;  // 2^27 + 1: a 26-bit head
};

template <>
struct Format<float> {
    using Int = std::int32_t;
    using Bits = std::uint32_t;
    static constexpr int kMantissaBits = 23;
    static constexpr Int kBias = 127;
    static constexpr float kShifter = 0x1.8p23f;
    static constexpr auto& kLn2 = constants::kLn2F;  // a 16-bit head: exact for |k| < 2^8
    static constexpr float kInvLn2 = constants::kInvLn2F;
    static constexpr auto& kExpm1Taylor = constants::kExpm1TaylorF;
    static constexpr auto& kErfcxPolynomial = constants::kErfcxPolynomialF;
    static constexpr float kExpMax = 89;
    static constexpr float kExpMin = -104;
    static constexpr float kTanhOne = 10;
    static constexpr float kErfcZero = 10.5f;
};

// The kernels below take a scalar (float, double) or a GCC vector of them
// (the vector extension, as train/kernels/narrow_kernel.h uses): its operators act
// lane by lane with the scalar operator's rounding, and ?: on a vector
// condition selects lane by lane, so a lane computes the scalar's bits.
// Scalar<V> is the element type, IntOf<V> the integers of the same shape.
template <class V>
struct LaneTraits {
    using Scalar = V;
    using Int = typename Format<V>::Int;
};
template <class V>
    requires requires(V v) { v[0]; }
struct LaneTraits<V> {
    using Scalar = std::remove_cvref_t<decltype(std::declval<V>()[0])>;
    typedef typename Format<Scalar>::Int Int __attribute__((vector_size(sizeof(V))));
};
template <class V>
using Scalar = typename LaneTraits<V>::Scalar;
template <class V>
using IntOf = typename LaneTraits<V>::Int;

// a b + c rounded once (IEEE-754 fusedMultiplyAdd): the canonical order's
// fused step (gemm/gemm.h). Correctly rounded by definition, so every
// build gives the same bits: a build with FMA instructions uses them (one
// vfmadd per native vector, a wider GCC vector in halves; GCC does not
// vectorise a lane loop of fmas reliably), the ref build calls the C
// library's fma per lane (hardware where the CPU has it, software
// otherwise, the same bits either way).
template <class V>
inline V fmadd(V a, V b, V c) {
    if constexpr (requires { a[0]; }) {
        using E = std::remove_cvref_t<decltype(a[0])>;
        constexpr std::size_t bytes = sizeof(V);
#if defined(__AVX512F__)
        if constexpr (bytes == 64) {
            if constexpr (sizeof(E) == 4) return std::bit_cast<V>(_mm512_fmadd_ps(std::bit_cast<__m512>(a), std::bit_cast<__m512>(b), std::bit_cast<__m512>(c)));
            else return std::bit_cast<V>(_mm512_fmadd_pd(std::bit_cast<__m512d>(a), std::bit_cast<__m512d>(b), std::bit_cast<__m512d>(c)));
        }
        constexpr std::size_t native = 64;
#elif defined(__FMA__)
        constexpr std::size_t native = 32;
#else
        constexpr std::size_t native = 0;
#endif
#if defined(__FMA__)
        if constexpr (bytes == 32) {
            if constexpr (sizeof(E) == 4) return std::bit_cast<V>(_mm256_fmadd_ps(std::bit_cast<__m256>(a), std::bit_cast<__m256>(b), std::bit_cast<__m256>(c)));
            else return std::bit_cast<V>(_mm256_fmadd_pd(std::bit_cast<__m256d>(a), std::bit_cast<__m256d>(b), std::bit_cast<__m256d>(c)));
        }
#endif
        if constexpr (native != 0 && bytes > native) {
            typedef E Half __attribute__((vector_size(bytes / 2)));
            struct Halves {
                Half lo, hi;
            };
            const auto [alo, ahi] = std::bit_cast<Halves>(a);
            const auto [blo, bhi] = std::bit_cast<Halves>(b);
            const auto [clo, chi] = std::bit_cast<Halves>(c);
            return std::bit_cast<V>(Halves{fmadd(alo, blo, clo), fmadd(ahi, bhi, chi)});
        } else {
            V r;
            for (std::size_t l = 0; l < bytes / sizeof(E); ++l) {
                if constexpr (sizeof(E) == 4) r[l] = __builtin_fmaf(a[l], b[l], c[l]);
                else r[l] = __builtin_fma(a[l], b[l], c[l]);
            }
            return r;
        }
    } else if constexpr (sizeof(V) == 4) {
        return __builtin_fmaf(a, b, c);
    } else {
        return __builtin_fma(a, b, c);
    }
}

// a > 0 ? a : 0 lane by lane (0 for NaN and for -0), as one max
// instruction per native vector: x86's max returns its second operand
// unless the first is greater, which is this select exactly.
template <class V>
inline V positive_part(V a) {
    constexpr std::size_t bytes = sizeof(V);
    using E = std::remove_cvref_t<decltype(a[0])>;
#if defined(__AVX512F__)
    if constexpr (bytes == 64) {
        if constexpr (sizeof(E) == 4) return std::bit_cast<V>(_mm512_max_ps(std::bit_cast<__m512>(a), _mm512_setzero_ps()));
        else return std::bit_cast<V>(_mm512_max_pd(std::bit_cast<__m512d>(a), _mm512_setzero_pd()));
    }
    constexpr std::size_t native = 64;
#elif defined(__AVX__)
    constexpr std::size_t native = 32;
#else
    constexpr std::size_t native = 16;
#endif
#if defined(__AVX__)
    if constexpr (bytes == 32) {
        if constexpr (sizeof(E) == 4) return std::bit_cast<V>(_mm256_max_ps(std::bit_cast<__m256>(a), _mm256_setzero_ps()));
        else return std::bit_cast<V>(_mm256_max_pd(std::bit_cast<__m256d>(a), _mm256_setzero_pd()));
    }
#endif
    if constexpr (bytes == 16) {
        if constexpr (sizeof(E) == 4) return std::bit_cast<V>(_mm_max_ps(std::bit_cast<__m128>(a), _mm_setzero_ps()));
        else return std::bit_cast<V>(_mm_max_pd(std::bit_cast<__m128d>(a), _mm_setzero_pd()));
    } else if constexpr (bytes > native) {
        typedef E Half __attribute__((vector_size(bytes / 2)));
        struct Halves {
            Half lo, hi;
        };
        const auto [lo, hi] = std::bit_cast<Halves>(a);
        return std::bit_cast<V>(Halves{positive_part(lo), positive_part(hi)});
    } else {
        return a > V{} ? a : V{};
    }
}

// c[0] + x (c[1] + x (c[2] + ...)), innermost first, each step one
// multiply and add: fused (fmadd) with `fused`, else rounded twice. The
// activations' functions (exp, tanh, erfc) use the fused form; log, sin
// and cos, whose bits every random draw depends on, keep the plain one.
template <bool fused = false, class S, std::size_t N, class V>
inline V horner(const S (&c)[N], V x) {
    static_assert(N >= 2);
    if constexpr (fused) {
        const auto lanes = [](S s) { return V{} + static_cast<Scalar<V>>(s); };  // s in every lane
        V y = fmadd(lanes(c[N - 1]), x, lanes(c[N - 2]));
        for (std::size_t i = N - 2; i-- > 0;) y = fmadd(y, x, lanes(c[i]));
        return y;
    } else {
        V y = c[N - 1] * x + c[N - 2];
        for (std::size_t i = N - 2; i-- > 0;) y = y * x + c[i];
        return y;
    }
}

// b when a is NaN: a clamped NaN becomes a harmless number, and the NaN is
// restored by the caller's final select.
template <class V, class B>
inline V min(V a, B b) { return a < b ? a : b; }
template <class V, class B>
inline V max(V a, B b) { return a > b ? a : b; }

template <class V>
inline IntOf<V> sign_bit(V a) {
    using Int = IntOf<V>;
    return std::bit_cast<Int>(a) & std::numeric_limits<typename Format<Scalar<V>>::Int>::min();
}
template <class V>
inline V with_sign_bit(V magnitude, IntOf<V> sign) { return std::bit_cast<V>(std::bit_cast<IntOf<V>>(magnitude) | sign); }
template <class V>
inline V abs(V a) { return std::bit_cast<V>(std::bit_cast<IntOf<V>>(a) ^ sign_bit(a)); }

// 2^k for k in the normal range, from its bits (k + bias is positive, so
// the shift never meets a sign bit).
template <class V>
inline V power_of_two(IntOf<V> k) {
    using F = Format<Scalar<V>>;
    return std::bit_cast<V>((k + F::kBias) << F::kMantissaBits);
}

// exp(m) to m^4 / 24, for exp_minus_square's small m.
inline constexpr double kExpSeries4[] = {1, 1, 0.5, 1.0 / 6, 1.0 / 24};

// exp(r) - 1 for |r| <= ln(2)/2: r + r^2 (1/2 + r/6 + ...).
template <class V>
inline V expm1_reduced(V r) { return fmadd(r * r, horner<true>(Format<Scalar<V>>::kExpm1Taylor, r), r); }

// x = k ln2 + r with |r| <= ln(2)/2, for |x| within the exponent range: k
// by adding kShifter, which rounds x/ln2 to the nearest integer (ties to
// even) and leaves it in the low bits; k ln2's head is exact (a short head
// times a small k).
template <class V>
struct Reduced {
    V r;
    IntOf<V> k;
};
template <class V>
inline Reduced<V> reduce_ln2(V x) {
    using F = Format<Scalar<V>>;
    using Int = IntOf<V>;
    const V shifted = x * F::kInvLn2 + F::kShifter;
    const V k = shifted - F::kShifter;
    return {(x - k * F::kLn2[0]) - k * F::kLn2[1], std::bit_cast<Int>(shifted) - std::bit_cast<typename F::Int>(F::kShifter)};
}

template <class V>
inline V exp(V x) {
    using F = Format<Scalar<V>>;
    // Clamped so that k stays small; as for every x beyond, exp(kExpMin)
    // rounds to 0 and exp(kExpMax) overflows.
    const auto [r, k] = reduce_ln2(max(min(x, F::kExpMax), F::kExpMin));
    // 2^k in two factors, each a normal number: one rounding at most, only
    // when the result is subnormal (as ldexp).
    const IntOf<V> k1 = k >> 1;
    const V y = (1 + expm1_reduced(r)) * power_of_two<V>(k1) * power_of_two<V>(k - k1);
    return x != x ? x : y;
}

// tanh(x) = t / (t + 2) with t = exp(2|x|) - 1 = 2^k e + (2^k - 1), e =
// exp(r) - 1. Beyond kTanhOne, tanh rounds to +-1, and so does this
// formula at the clamp.
template <class V>
inline V tanh(V x) {
    const V a = min(abs(x), Format<Scalar<V>>::kTanhOne);
    const auto [r, k] = reduce_ln2(2 * a);
    const V two_k = power_of_two<V>(k);
    const V t = fmadd(two_k, expm1_reduced(r), two_k - 1);
    const V y = t / (t + 2);  // >= 0: x's sign bit put on it keeps tanh(-0) = -0
    return x != x ? x : with_sign_bit(y, sign_bit(x));
}

// exp(-a^2) for 0 <= a <= kErfcZero. In double, a^2 is split exactly into
// hi + lo (Veltkamp: a's head has 26 bits, so hi = head^2 is exact), since
// rounding a^2 first would put an error of a^2 units into the result;
// |lo| < 2^-12, and the series of exp(-lo) to lo^4/24 is within 2^-70 of
// it. In float the split buys nothing: the float a the callers pass
// (x / sqrt 2 for GELU) is already rounded, which puts 2 a^2 units into
// exp(-a^2) before this function starts, and a^2's own rounding adds a^2
// (tests/nn/test_activation.cpp measures the same bounds with and without).
template <class V>
inline V exp_minus_square(V a) {
    using S = Scalar<V>;
    if constexpr (sizeof(S) == 4) {
        return exp(-(a * a));
    } else {
        const V c = Format<S>::kVeltkamp * a;
        const V head = c - (c - a);
        const V tail = a - head;
        const V m = -((2 * head + tail) * tail);  // -lo
        const V exp_m = horner<true>(kExpSeries4, m);
        return exp(-(head * head)) * exp_m;
    }
}

// erfc(x) = exp(-a^2) t P(s), a = |x|, t = 2 / (2 + a), s = 2t - 1, one
// polynomial for every a (lib/core/math_constants.py); 2 - that for x < 0.
// Beyond kErfcZero, erfc is below the least subnormal, as is this at the
// clamp. exp(-x^2) comes along: GELU's derivative needs both.
template <class V>
struct ErfcAndGaussian {
    V erfc;
    V gaussian;  // exp(-x^2)
};
template <class V>
inline ErfcAndGaussian<V> erfc_and_gaussian(V x) {
    const V a = min(abs(x), Format<Scalar<V>>::kErfcZero);
    const V t = 2 / (2 + a);
    const V gaussian = exp_minus_square(a);
    const V tail = gaussian * (t * horner<true>(Format<Scalar<V>>::kErfcxPolynomial, 2 * t - 1));
    const V erfc = x < 0 ? 2 - tail : tail;
    return {x != x ? x : erfc, x != x ? x : gaussian};
}

template <class V>
inline V erfc(V x) { return erfc_and_gaussian(x).erfc; }

// Below x = -709.78 (-88.72 in float) exp(-x) overflows and this is 0,
// where the true value is below the least normal number.
template <class V>
inline V sigmoid(V x) { return 1 / (1 + exp(-x)); }

}  // namespace
}  // namespace ffn::math::kernels
