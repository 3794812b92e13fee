#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/hash.h"
#include "core/math.h"

namespace {

// Distance in units in the last place: the number of doubles between a and b.
std::int64_t ulps(double a, double b) {
    if (a == b) return 0;
    auto ordered = [](double v) {
        const auto bits = std::bit_cast<std::int64_t>(v);
        return bits < 0 ? std::numeric_limits<std::int64_t>::min() - bits : bits;
    };
    const std::int64_t d = ordered(a) - ordered(b);
    return d < 0 ? -d : d;
}

// Arguments: an even grid on [lo, hi] and, where the range allows, numbers
// spread over many binades, so both typical and tiny arguments are met.
std::vector<double> arguments(double lo, double hi, int count = 200001) {
    std::vector<double> xs;
    for (int i = 0; i < count; ++i) xs.push_back(lo + (hi - lo) * i / (count - 1));
    for (double m = 0x1p-60; m < std::fmax(std::fabs(lo), std::fabs(hi)); m *= 1.0137) {
        if (m >= lo && m <= hi) xs.push_back(m);
        if (-m >= lo && -m <= hi) xs.push_back(-m);
    }
    return xs;
}

// The largest distance from the C library, which is within one unit of the
// exact value for these functions: a bound of b here puts ffn::math within
// b + 1 units of the exact value.
std::int64_t worst(const std::function<double(double)>& ours, double (*c_library)(double), double lo, double hi) {
    std::int64_t most = 0;
    for (const double x : arguments(lo, hi)) most = std::max(most, ulps(ours(x), c_library(x)));
    return most;
}

double exp_(double x) { return std::exp(x); }
double expm1_(double x) { return std::expm1(x); }
double log_(double x) { return std::log(x); }
double log1p_(double x) { return std::log1p(x); }
double sin_(double x) { return std::sin(x); }
double cos_(double x) { return std::cos(x); }
double tan_(double x) { return std::tan(x); }
double atan_(double x) { return std::atan(x); }
double asin_(double x) { return std::asin(x); }
double acos_(double x) { return std::acos(x); }
double sinh_(double x) { return std::sinh(x); }
double cosh_(double x) { return std::cosh(x); }
double tanh_(double x) { return std::tanh(x); }
double asinh_(double x) { return std::asinh(x); }
double acosh_(double x) { return std::acosh(x); }
double atanh_(double x) { return std::atanh(x); }
double erf_(double x) { return std::erf(x); }
double erfc_(double x) { return std::erfc(x); }

}  // namespace

// Each bound is the worst case measured on these arguments (printed by the
// MESSAGE lines) plus one, because the C library on another machine may be
// one unit away from this one's; a change that loses accuracy fails here.
TEST_CASE("ffn::math stays within a few units in the last place of the C library") {
    struct Case {
        const char* name;
        std::function<double(double)> ours;
        double (*reference)(double);
        double lo, hi;
        std::int64_t bound;
    };
    const std::vector<Case> cases = {
        {"exp", ffn::math::exp, exp_, -745, 709.7, 2},
        {"expm1", ffn::math::expm1, expm1_, -50, 709, 3},
        {"log", ffn::math::log, log_, 0, 1e300, 2},
        {"log near 1", ffn::math::log, log_, 0.5, 2, 2},
        {"log1p", ffn::math::log1p, log1p_, -0.999999, 100, 2},
        {"sin", ffn::math::sin, sin_, -1e5, 1e5, 3},
        {"sin near 0", ffn::math::sin, sin_, -7, 7, 2},
        {"cos", ffn::math::cos, cos_, -1e5, 1e5, 3},
        {"cos near 0", ffn::math::cos, cos_, -7, 7, 2},
        {"tan", ffn::math::tan, tan_, -7, 7, 4},
        {"atan", ffn::math::atan, atan_, -1e6, 1e6, 4},
        {"atan near 0", ffn::math::atan, atan_, -4, 4, 5},
        {"asin", ffn::math::asin, asin_, -1, 1, 6},
        {"acos", ffn::math::acos, acos_, -1, 1, 6},
        {"sinh", ffn::math::sinh, sinh_, -710, 710, 3},
        {"cosh", ffn::math::cosh, cosh_, -710, 710, 3},
        {"tanh", ffn::math::tanh, tanh_, -30, 30, 4},
        {"asinh", ffn::math::asinh, asinh_, -1e10, 1e10, 2},
        {"acosh", ffn::math::acosh, acosh_, 1, 1e10, 2},
        {"atanh", ffn::math::atanh, atanh_, -0.999999, 0.999999, 2},
        {"erf", ffn::math::erf, erf_, -7, 7, 3},
        {"erfc", ffn::math::erfc, erfc_, -7, 27, 7},
    };
    for (const auto& c : cases) {
        const std::int64_t measured = worst(c.ours, c.reference, c.lo, c.hi);
        MESSAGE(std::string(c.name) << " on [" << c.lo << ", " << c.hi << "]: worst " << measured << " ulp");
        CHECK_MESSAGE(measured <= c.bound, c.name);
    }
}

TEST_CASE("ffn::math gives the exact answers where there is one") {
    namespace m = ffn::math;
    const double inf = std::numeric_limits<double>::infinity();
    CHECK(m::exp(0) == 1);
    CHECK(m::exp(1000) == inf);
    CHECK(m::exp(-1000) == 0);
    CHECK(std::isnan(m::exp(std::nan(""))));
    CHECK(m::exp(-745.0) > 0);  // the least subnormal, 4.9e-324
    CHECK(m::log(1) == 0);
    CHECK(m::log(0) == -inf);
    CHECK(std::isnan(m::log(-1)));
    CHECK(m::log(inf) == inf);
    CHECK(m::log(std::numeric_limits<double>::denorm_min()) == std::log(std::numeric_limits<double>::denorm_min()));
    CHECK(m::log2(1024) == 10);
    CHECK(m::log2(0.125) == -3);
    CHECK(m::pow(3, 2) == 9);
    CHECK(m::pow(2, -2) == 0.25);
    CHECK(m::pow(-2, 3) == -8);
    CHECK(std::isnan(m::pow(-2, 0.5)));
    CHECK(m::pow(0, -1) == inf);
    CHECK(m::pow(std::nan(""), 0) == 1);
    CHECK(m::sin(0) == 0);
    CHECK(std::signbit(m::sin(-0.0)));
    CHECK(m::cos(0) == 1);
    CHECK(std::isnan(m::sin(inf)));
    CHECK(std::isnan(m::sin(1e300)));  // beyond the accurate reduction: NaN, not a wrong number
    CHECK(m::atan2(0.0, -1.0) == std::atan2(0.0, -1.0));
    CHECK(m::atan2(-1.0, 0.0) == std::atan2(-1.0, 0.0));
    CHECK(m::atan2(inf, -inf) == std::atan2(inf, -inf));
    CHECK(m::acos(-1) == std::acos(-1));
    CHECK(m::tanh(30) == 1);
    CHECK(std::signbit(m::tanh(-0.0)));   // signed zeros kept, as C's Annex F asks
    CHECK(std::signbit(m::expm1(-0.0)));
    CHECK(m::atan(5e-324) == 5e-324);     // the least subnormal survives
    CHECK(m::atan(-1.5e-323) == -1.5e-323);
    CHECK(m::erf(0) == 0);
    CHECK(m::erf(10) == 1);
    CHECK(m::erfc(30) == 0);
    CHECK(m::erfc(-30) == 2);
    CHECK(m::atanh(1) == inf);
    CHECK(std::isnan(m::acosh(0.5)));
}

TEST_CASE("ffn::math's pow and atan2 agree with the C library over their planes") {
    // pow: square-and-multiply for small integer exponents (a few roundings),
    // exp(y log x) otherwise, whose error grows with |y log x| (log x is
    // rounded, then multiplied by y): the promise is 2 |y log x| + 3 units.
    std::int64_t most_pow = 0, most_atan2 = 0;
    for (double x = 0.01; x < 20; x *= 1.07)
        for (double y = -8; y <= 8; y += 0.25) {
            const auto allowed = static_cast<std::int64_t>(2 * std::fabs(y * std::log(x))) + 3;
            most_pow = std::max(most_pow, ulps(ffn::math::pow(x, y), std::pow(x, y)) - allowed);
            most_atan2 = std::max(most_atan2, ulps(ffn::math::atan2(y, x - 10), std::atan2(y, x - 10)));
        }
    MESSAGE("pow: worst " << most_pow << " ulp beyond the promise; atan2: worst " << most_atan2 << " ulp");
    CHECK(most_pow <= 0);
    CHECK(most_atan2 <= 3);
}

// The point of ffn::math: the same bits everywhere. A digest of each
// function's bits on 2^16 arguments, recorded on x86-64 (GCC and clang, with
// and without FMA hardware); a compiler that fused a multiply-add, a
// reordered sum or a changed constant shows here as a changed digest. When
// an algorithm is changed on purpose, update the digest and the expected
// tables together, and say why in the commit.
TEST_CASE("ffn::math gives the recorded bits") {
    auto digest = [](const std::function<double(double)>& f, double lo, double hi) {
        std::uint64_t h = 0;
        for (int i = 0; i < (1 << 16); ++i)
            h = ffn::hash_combine(h, std::bit_cast<std::uint64_t>(f(lo + (hi - lo) * i / ((1 << 16) - 1))));
        return h;
    };
    const std::uint64_t measured[] = {
        digest(ffn::math::exp, -20, 20),   digest(ffn::math::log, 1e-3, 1e3), digest(ffn::math::sin, -10, 10),
        digest(ffn::math::cos, -10, 10),   digest(ffn::math::tanh, -10, 10),  digest(ffn::math::erfc, -6, 6),
        digest(ffn::math::atan, -10, 10),  digest(ffn::math::sigmoid, -20, 20),
        digest([](double x) { return ffn::math::pow(x, 0.37); }, 0, 10),
    };
    // exp, tanh, erfc, sigmoid and pow changed when their polynomials
    // became fused multiply-adds (issue 32): the same bits with the C
    // library's fma in hardware and in software (GLIBC_TUNABLES=
    // glibc.cpu.hwcaps=-AVX2,-FMA).
    const std::uint64_t recorded[] = {
        13786991545825223789ull, 6258750975499118260ull, 11720813710837249529ull,
        13914175465450700014ull, 16502014627852677289ull, 915676675502353464ull,
        4787588706294209320ull, 6921580223882111871ull, 6946093665700931042ull,
    };
    for (std::size_t i = 0; i < std::size(recorded); ++i) {
        MESSAGE("digest " << i << ": " << measured[i] << "ull");
        CHECK(measured[i] == recorded[i]);
    }
}
