#include "core/math.h"

// Only exact operations come from <cmath> here (sqrt, frexp, nearbyint,
// floor, fabs, copysign, the classification functions): they have one
// correct answer, so no C library can differ.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "core/kernels/math_kernels.h"

namespace ffn::math {

namespace {
using namespace constants;
using kernels::horner;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kSqrtHalf = 0x1.6a09e667f3bcdp-1;  // sqrt(1/2), rounded up: the split point of log's mantissa

// y * 2^k with one rounding (only when the result is subnormal), as ldexp.
double scale(double y, int k) {
    const int k1 = k / 2;
    return y * kernels::power_of_two<double>(k1) * kernels::power_of_two<double>(k - k1);
}

using kernels::expm1_reduced;

// log(1 + f) for sqrt(1/2) - 1 <= f < sqrt(2) - 1, as 2 atanh(s) with
// s = f / (2 + f), written f - s (f - R) so that the large part, f, is exact.
double log1p_reduced(double f) {
    const double s = f / (2 + f);
    const double z = s * s;
    const double R = z * horner(kAtanhSeries, z);
    return f - s * (f - R);
}

// x = k pi/2 + r with |r| <= pi/4: three parts of pi/2, each head exact
// times k < 2^20.
bool reduce_pi_over_2(double x, double& r, int& quadrant) {
    if (!(std::fabs(x) < 0x1p20)) return false;  // also NaN and infinity
    quadrant = 0;
    r = x;  // keeps the sign of -0
    if (std::fabs(x) <= 0.5 * kPiOver2Pair[0]) return true;
    const double k = std::nearbyint(x * kTwoOverPi);
    r = ((x - k * kPiOver2[0]) - k * kPiOver2[1]) - k * kPiOver2[2];
    quadrant = static_cast<int>(static_cast<std::int64_t>(k) & 3);
    return true;
}

double sin_reduced(double r) {
    if (std::fabs(r) < 0x1p-27) return r;  // r^3/6 is below half a unit of r; keeps -0
    const double z = r * r;
    return r + (r * z) * horner(kSinTaylor, z);
}

// cos r = 1 - r^2/2 + r^4 (...); w = 1 - r^2/2 rounds, and ((1 - w) - r^2/2)
// is exactly what that rounding lost.
double cos_reduced(double r) {
    const double z = r * r;
    const double half_z = 0.5 * z;
    const double w = 1 - half_z;
    return w + (((1 - w) - half_z) + (z * z) * horner(kCosTaylor, z));
}

double pi_over_2_minus(double t) { return (kPiOver2Pair[0] - t) + kPiOver2Pair[1]; }
double pi_minus(double t) { return (2 * kPiOver2Pair[0] - t) + 2 * kPiOver2Pair[1]; }

}  // namespace

double exp(double x) { return kernels::exp(x); }

double expm1(double x) {
    if (std::isnan(x) || x == 0) return x;  // keeps -0
    if (std::fabs(x) <= 0.5 * kLn2Pair[0]) return expm1_reduced(x);
    if (x < -40) return -1;  // exp(-40) < 2^-57: -1 to the last bit
    if (x > 710) return kInf;
    const auto [r, k] = kernels::reduce_ln2(x);
    const double e = expm1_reduced(r);
    const int n = static_cast<int>(k);
    // 2^n (1 + e) - 1 = 2^n e + (2^n - 1), each part exact while n <= 53.
    if (n > 53) return scale(1 + e, n) - 1;
    const double two_n = scale(1, n);
    return two_n * e + (two_n - 1);
}

double log(double x) {
    if (std::isnan(x) || x == kInf) return x;
    if (x < 0) return kNaN;
    if (x == 0) return -kInf;
    int e;
    double m = std::frexp(x, &e);  // x = m 2^e, m in [1/2, 1), exact also for subnormals
    if (m < kSqrtHalf) {
        m *= 2;
        --e;
    }
    return e * kLn2[0] + (log1p_reduced(m - 1) + e * kLn2[1]);
}

double log1p(double x) {
    if (std::isnan(x) || x == kInf) return x;
    if (x < -1) return kNaN;
    if (x == -1) return -kInf;
    if (x >= kSqrtHalf - 1 && x < 2 * kSqrtHalf - 1) return log1p_reduced(x);
    // u = 1 + x rounds; (x - (u - 1)) / u is what log(u) misses of log(1 + x).
    const double u = 1 + x;
    return log(u) + (x - (u - 1)) / u;
}

double log2(double x) {
    int e;
    if (std::isfinite(x) && x > 0 && std::frexp(x, &e) == 0.5) return e - 1;  // powers of two exactly
    return log(x) * kInvLn2;
}

double log10(double x) { return log(x) * kInvLn10; }

double pow(double x, double y) {
    if (y == 0 || x == 1) return 1;
    if (std::isnan(x) || std::isnan(y)) return kNaN;
    const bool y_integer = std::isfinite(y) && std::floor(y) == y;
    const bool y_odd = y_integer && std::fabs(y) < 0x1p53 && (static_cast<std::int64_t>(y) & 1) != 0;
    if (std::isinf(y)) {
        const double ax = std::fabs(x);
        if (ax == 1) return 1;
        return (ax > 1) == (y > 0) ? kInf : 0;
    }
    if (x == 0 || std::isinf(x)) {
        const bool grows = (x == 0) == (y < 0);
        const double magnitude = grows ? kInf : 0;
        return y_odd ? std::copysign(magnitude, x) : magnitude;
    }
    if (x < 0 && !y_integer) return kNaN;
    const double ax = std::fabs(x);
    double result = 0;
    bool done = false;
    if (y_integer && std::fabs(y) <= 64) {
        // Square and multiply: exact for x^2, a few roundings otherwise. (Not
        // for large y: each squaring doubles the error so far, where
        // exp(y log x) grows it with |y log x| only.)
        auto n = static_cast<std::uint32_t>(std::fabs(y));
        double base = ax;
        result = 1;
        while (n) {
            if (n & 1) result *= base;
            base *= base;
            n >>= 1;
        }
        if (y < 0) result = 1 / result;
        done = std::isfinite(result) && result != 0;  // else an intermediate left the range
    }
    if (!done) result = exp(y * log(ax));
    return y_odd && x < 0 ? -result : result;
}

double sin(double x) {
    double r;
    int q;
    if (!reduce_pi_over_2(x, r, q)) return kNaN;
    switch (q) {
        case 0: return sin_reduced(r);
        case 1: return cos_reduced(r);
        case 2: return -sin_reduced(r);
        default: return -cos_reduced(r);
    }
}

double cos(double x) {
    double r;
    int q;
    if (!reduce_pi_over_2(x, r, q)) return kNaN;
    switch (q) {
        case 0: return cos_reduced(r);
        case 1: return -sin_reduced(r);
        case 2: return -cos_reduced(r);
        default: return sin_reduced(r);
    }
}

double tan(double x) {
    double r;
    int q;
    if (!reduce_pi_over_2(x, r, q)) return kNaN;
    return q % 2 == 0 ? sin_reduced(r) / cos_reduced(r) : -cos_reduced(r) / sin_reduced(r);
}

double atan(double x) {
    if (std::isnan(x)) return x;
    double a = std::fabs(x);
    if (a < 0x1p-27) return x;  // x^3/3 is below half a unit; the halvings below would lose subnormals' bits
    const bool inverted = a > 1;
    if (inverted) a = 1 / a;
    // Twice atan(a) = 2 atan(a / (1 + sqrt(1 + a^2))): |a| <= tan(pi/16).
    for (int i = 0; i < 2; ++i) a = a / (1 + std::sqrt(1 + a * a));
    const double z = a * a;
    double t = 4 * (a + (a * z) * horner(kAtanTaylor, z));
    if (inverted) t = pi_over_2_minus(t);
    return std::copysign(t, x);
}

double atan2(double y, double x) {
    if (std::isnan(x) || std::isnan(y)) return kNaN;
    const double pi = 2 * kPiOver2Pair[0];
    if (y == 0) return std::signbit(x) ? std::copysign(pi, y) : y;
    if (x == 0) return std::copysign(kPiOver2Pair[0], y);
    if (std::isinf(x)) {
        if (std::isinf(y)) return std::copysign(x > 0 ? 0.5 * kPiOver2Pair[0] : 1.5 * kPiOver2Pair[0], y);
        return std::copysign(x > 0 ? 0.0 : pi, y);
    }
    if (std::isinf(y)) return std::copysign(kPiOver2Pair[0], y);
    const double ax = std::fabs(x);
    const double ay = std::fabs(y);
    double t = ay > ax ? pi_over_2_minus(atan(ax / ay)) : atan(ay / ax);
    if (x < 0) t = pi_minus(t);
    return std::copysign(t, y);
}

double asin(double x) {
    if (std::isnan(x) || std::fabs(x) > 1) return kNaN;
    return atan2(x, std::sqrt((1 - x) * (1 + x)));
}

double acos(double x) {
    if (std::isnan(x) || std::fabs(x) > 1) return kNaN;
    return 2 * atan2(std::sqrt(1 - x), std::sqrt(1 + x));
}

double sinh(double x) {
    if (std::isnan(x)) return x;
    const double a = std::fabs(x);
    double h;
    if (a < 22) {
        const double t = expm1(a);
        h = 0.5 * (t + t / (t + 1));  // (e^a - e^-a) / 2 without cancellation near 0
    } else if (a < 709) {
        h = 0.5 * exp(a);
    } else {
        const double e = exp(0.5 * a);  // e^a would overflow before the halving
        h = (0.5 * e) * e;
    }
    return std::copysign(h, x);
}

double cosh(double x) {
    if (std::isnan(x)) return x;
    const double a = std::fabs(x);
    if (a < 0.5 * kLn2Pair[0]) {
        const double t = expm1(a);
        const double w = 1 + t;
        return 1 + (t * t) / (w + w);
    }
    if (a < 22) {
        const double e = exp(a);
        return 0.5 * e + 0.5 / e;
    }
    if (a < 709) return 0.5 * exp(a);
    const double e = exp(0.5 * a);
    return (0.5 * e) * e;
}

double tanh(double x) { return kernels::tanh(x); }

double asinh(double x) {
    if (!std::isfinite(x)) return x;
    const double a = std::fabs(x);
    double h;
    if (a > 0x1p28) {
        h = log(a) + kLn2Pair[0];
    } else if (a > 2) {
        h = log(2 * a + 1 / (std::sqrt(a * a + 1) + a));
    } else {
        const double a2 = a * a;
        h = log1p(a + a2 / (1 + std::sqrt(1 + a2)));
    }
    return std::copysign(h, x);
}

double acosh(double x) {
    if (std::isnan(x) || x == kInf) return x;
    if (x < 1) return kNaN;
    if (x > 0x1p28) return log(x) + kLn2Pair[0];
    if (x > 2) return log(2 * x - 1 / (x + std::sqrt(x * x - 1)));
    const double t = x - 1;
    return log1p(t + std::sqrt(2 * t + t * t));
}

double atanh(double x) {
    if (std::isnan(x)) return x;
    const double a = std::fabs(x);
    if (a > 1) return kNaN;
    if (a == 1) return std::copysign(kInf, x);
    const double h = a < 0.5 ? 0.5 * log1p(2 * a + 2 * a * a / (1 - a)) : 0.5 * log1p(2 * a / (1 - a));
    return std::copysign(h, x);
}

double erf(double x) {
    if (std::fabs(x) < 1) return x * horner(kErfTaylor, x * x);  // 1 - erfc(x) would cancel near 0
    return std::copysign(1 - kernels::erfc(std::fabs(x)), x);   // NaN stays NaN
}

double erfc(double x) { return kernels::erfc(x); }

double sigmoid(double x) { return kernels::sigmoid(x); }

}  // namespace ffn::math
