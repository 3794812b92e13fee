// The activations' loops are built twice (portable and AVX2, see
// lib/nn/kernels/activation_loops.h); every family the machine runs must give the
// bits the scalar activate() gives, on arrays of every length (vector
// bodies and remainders) and over the whole range (tails, NaN, infinities).
#include <doctest/doctest.h>

#include "support.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "gemm/gemm.h"
#include "nn/activation.h"

using ffn::nn::Activation;

namespace {

template <class T>
std::vector<T> inputs() {
    std::vector<T> xs;
    for (int i = -4000; i <= 4000; ++i) xs.push_back(static_cast<T>(i / 100.0));  // [-40, 40]
    for (double m = 1e-30; m < 1e30; m *= 3.7) {
        xs.push_back(static_cast<T>(m));
        xs.push_back(static_cast<T>(-m));
    }
    xs.push_back(std::numeric_limits<T>::infinity());
    xs.push_back(-std::numeric_limits<T>::infinity());
    xs.push_back(std::numeric_limits<T>::quiet_NaN());
    xs.push_back(T(0));
    xs.push_back(-T(0));
    return xs;
}

// Bit for bit, except that any NaN equals any NaN: which operand's NaN an
// x86 instruction passes on depends on operand order, which the compiler may
// swap in commutative operations; tables print every NaN alike.
template <class T>
bool same_bits_any_nan(const std::vector<T>& a, const std::vector<T>& b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (std::isnan(a[i]) && std::isnan(b[i])) continue;
        if (std::memcmp(&a[i], &b[i], sizeof(T)) != 0) return false;
    }
    return true;
}

template <class T>
void check_every_family() {
    const std::vector<T> xs = inputs<T>();
    for (const Activation a : {Activation::tanh, Activation::gelu, Activation::gelu_tanh, Activation::silu, Activation::sigmoid,
                               Activation::relu, Activation::identity}) {
        CAPTURE(std::string(ffn::nn::to_string(a)));
        std::vector<T> scalar_value, scalar_derivative;
        for (const T x : xs) {
            scalar_value.push_back(ffn::nn::activate(a, x));
            scalar_derivative.push_back(ffn::nn::activate_derivative(a, x));
        }
        ffn::test::for_each_isa([&](ffn::Isa) {
            std::vector<T> values = xs;
            ffn::nn::activate_inplace<T>(a, values);
            CHECK(same_bits_any_nan(values, scalar_value));
            std::vector<T> grad(xs.size(), T(1));
            ffn::nn::multiply_by_derivative<T>(a, xs, grad);
            CHECK(same_bits_any_nan(grad, scalar_derivative));
            // Value and derivative in one pass (a layer keeping act' for its
            // backward pass): the same bits as the two passes.
            std::vector<T> both = xs, derivative(xs.size(), T(-7));
            ffn::nn::activate_keeping_derivative<T>(a, both, derivative);
            CHECK(same_bits_any_nan(both, scalar_value));
            CHECK(same_bits_any_nan(derivative, scalar_derivative));
            // Short arrays: only the remainder loop.
            for (std::size_t n = 1; n < 9; ++n) {
                std::vector<T> head(xs.begin() + 4000, xs.begin() + 4000 + static_cast<long>(n));
                ffn::nn::activate_inplace<T>(a, head);
                CHECK(same_bits_any_nan(head, std::vector<T>(scalar_value.begin() + 4000, scalar_value.begin() + 4000 + static_cast<long>(n))));
            }
        });
    }
}

// Distance in representable floats (the same sign assumed away: a step
// across zero counts both sides).
std::int64_t float_ulps(float a, float b) {
    const auto ordered = [](float f) {
        std::int32_t i;
        std::memcpy(&i, &f, sizeof f);
        return i < 0 ? std::int64_t{INT32_MIN} - i : std::int64_t{i};
    };
    return std::llabs(ordered(a) - ordered(b));
}

}  // namespace

TEST_CASE("every kernel family's activation loops give the scalar bits, float32") { check_every_family<float>(); }
TEST_CASE("every kernel family's activation loops give the scalar bits, float64") { check_every_family<double>(); }

TEST_CASE("the tanh form of GELU has a derivative where x^2 overflows float") {
    // 1 - tanh^2 is 0 there; x^2 is inf, and inf * 0 would be NaN.
    CHECK(ffn::nn::activate_derivative(Activation::gelu_tanh, 1e20f) == 1.0f);
    CHECK(ffn::nn::activate_derivative(Activation::gelu_tanh, -1e20f) == 0.0f);
    CHECK(ffn::nn::activate_derivative(Activation::gelu_tanh, 1e200) == 1.0);
}

TEST_CASE("GELU's tail keeps its digits") {
    // x Phi(x) at x = -10: 7.6e-23 (Phi(-10) = 7.6198530241605e-24, from
    // erfc(10/sqrt 2)/2 in Python's math module); the usual 1 + erf form
    // gives exactly 0 here. 1e-13 relative: a few units of ffn::math's erfc.
    CHECK(ffn::nn::activate(Activation::gelu, -10.0) == doctest::Approx(-10 * 7.6198530241605e-24).epsilon(1e-13));
    CHECK(ffn::nn::activate(Activation::gelu, -40.0) == 0.0);  // below the least subnormal
    CHECK(std::isnan(ffn::nn::activate(Activation::gelu, std::nan(""))));
}

// float32 activations run in float (lib/nn/kernels/activation_loops.h), float64's
// in double; the double formula is within a few units of 1e-16 of the
// function, so it stands for the exact value. The measures scale with x
// where float arithmetic has to lose digits whatever the formula's care:
// GELU rounds x/sqrt(2) to float, and exp(-x^2/2) turns that relative
// error into x^2 of them; SiLU's and the tanh form's derivatives multiply x
// (or x^3) into a difference like 1 - sigmoid(x) or 1 - tanh^2. So:
// - values, in float ulps of the value over max(1, x^2) (where the value is
//   above 1e-30: below, the exp(-x^2/2) inside GELU is subnormal); the tanh
//   form of GELU in 2^-24 max(1, |x|) instead, as 1 + tanh(u) cancels to 0
//   where tanh(u) rounds to -1 (z below about -5 in float, -7.2 in double);
// - derivatives, which are O(1) functions, in 2^-24 max(1, x^2).
TEST_CASE("float32 activations stay within a few float ulps of the float64 formulas") {
    struct Bound {
        Activation activation;
        double value;
        double derivative;
    };
    // Measured on this grid plus about one unit of room (doctest prints the
    // measurements with -s). GELU's 4 is at small negative x (-0.26), where
    // erfc(0.18) in float is exp, a division and a degree-12 polynomial:
    // four roundings of about one unit, no amplification.
    for (const Bound b : {Bound{Activation::tanh, 3, 3}, Bound{Activation::gelu, 5, 3}, Bound{Activation::gelu_tanh, 2.5, 3.5},
                          Bound{Activation::silu, 3, 3}, Bound{Activation::sigmoid, 3, 1.5}}) {
        CAPTURE(std::string(ffn::nn::to_string(b.activation)));
        std::vector<float> xs = inputs<float>();
        for (int i = -30 * 512; i <= 30 * 512; ++i) xs.push_back(static_cast<float>(i) / 512 + 1e-4f);
        double worst_value = 0, worst_derivative = 0;
        for (const float x : xs) {
            const float value = ffn::nn::activate(b.activation, x);
            const double reference = ffn::nn::activate(b.activation, static_cast<double>(x));
            if (std::isnan(reference)) {
                CHECK(std::isnan(value));
                continue;
            }
            if (!std::isfinite(reference) || std::fabs(x) > 30) continue;  // the tails: exact by the activation-loop tests
            const double x2 = std::max(1.0, static_cast<double>(x) * x);
            const double value_error = b.activation == Activation::gelu_tanh
                                           ? std::fabs(value - reference) * 0x1p24 / std::max(1.0, std::fabs(static_cast<double>(x)))
                                           : std::fabs(reference) < 1e-30 ? 0
                                                                          : static_cast<double>(float_ulps(value, static_cast<float>(reference))) / x2;
            worst_value = std::max(worst_value, value_error);
            const double derivative = ffn::nn::activate_derivative(b.activation, x);
            const double exact = ffn::nn::activate_derivative(b.activation, static_cast<double>(x));
            worst_derivative = std::max(worst_derivative, std::fabs(derivative - exact) * 0x1p24 / x2);
        }
        MESSAGE(ffn::nn::to_string(b.activation) << ": value within " << worst_value << ", derivative within " << worst_derivative);
        CHECK(worst_value <= b.value);
        CHECK(worst_derivative <= b.derivative);
    }
}
