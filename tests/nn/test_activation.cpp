// The activations' loops are built twice (portable and AVX2, see
// lib/nn/activation_loops.h); every family the machine runs must give the
// bits the scalar activate() gives, on arrays of every length (vector
// bodies and remainders) and over the whole range (tails, NaN, infinities).
#include <doctest/doctest.h>

#include <cmath>
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
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
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
    int count = 0;
    const char* const* isas = ffn::gemm::supported_isas(&count);
    const std::string before = ffn::gemm::active_isa();
    for (const Activation a : {Activation::tanh, Activation::gelu, Activation::gelu_tanh, Activation::silu, Activation::sigmoid}) {
        CAPTURE(std::string(ffn::nn::to_string(a)));
        std::vector<T> scalar_value, scalar_derivative;
        for (const T x : xs) {
            scalar_value.push_back(ffn::nn::activate(a, x));
            scalar_derivative.push_back(ffn::nn::activate_derivative(a, x));
        }
        for (int i = 0; i < count; ++i) {
            CAPTURE(std::string(isas[i]));
            REQUIRE(ffn::gemm::set_isa(isas[i]));
            std::vector<T> values = xs;
            ffn::nn::activate_inplace<T>(a, values);
            CHECK(same_bits(values, scalar_value));
            std::vector<T> grad(xs.size(), T(1));
            ffn::nn::multiply_by_derivative<T>(a, xs, grad);
            CHECK(same_bits(grad, scalar_derivative));
            // Short arrays: only the remainder loop.
            for (std::size_t n = 1; n < 9; ++n) {
                std::vector<T> head(xs.begin() + 4000, xs.begin() + 4000 + static_cast<long>(n));
                ffn::nn::activate_inplace<T>(a, head);
                CHECK(same_bits(head, std::vector<T>(scalar_value.begin() + 4000, scalar_value.begin() + 4000 + static_cast<long>(n))));
            }
        }
    }
    ffn::gemm::set_isa(before.c_str());
}

}  // namespace

TEST_CASE("every kernel family's activation loops give the scalar bits, float32") { check_every_family<float>(); }
TEST_CASE("every kernel family's activation loops give the scalar bits, float64") { check_every_family<double>(); }

TEST_CASE("GELU's tail keeps its digits") {
    // x Phi(x) at x = -10: 7.6e-23 (Phi(-10) = 7.6198530241605e-24, from
    // erfc(10/sqrt 2)/2 in Python's math module); the usual 1 + erf form
    // gives exactly 0 here. 1e-13 relative: a few units of ffn::math's erfc.
    CHECK(ffn::nn::activate(Activation::gelu, -10.0) == doctest::Approx(-10 * 7.6198530241605e-24).epsilon(1e-13));
    CHECK(ffn::nn::activate(Activation::gelu, -40.0) == 0.0);  // below the least subnormal
    CHECK(std::isnan(ffn::nn::activate(Activation::gelu, std::nan(""))));
}
