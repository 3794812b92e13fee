#!/usr/bin/env python3
"""Writes lib/core/math_constants.inc: the constants of ffn::math (core/math.cpp).

Every constant is computed here at 100 significant digits with Python's
decimal module (no libm, no numpy) and written as a C99 hex float, so the
table is exact and the same wherever it is regenerated:

    python3 lib/core/math_constants.py > lib/core/math_constants.inc

- pi/2, ln 2: split into a head with few significant bits and tails, so that
  k * head is exact in the range reductions (Cody and Waite).
- erf on |x| < 1: Taylor coefficients of erf(x) / x in u = x^2.
- erfcx(a) = exp(a^2) erfc(a) on a >= 0: t P(s) with t = 2 / (2 + a) and
  s = 2 t - 1, P a polynomial of degree 28 (Chebyshev interpolation in s,
  rewritten in powers of s), so one branch-free formula covers every a.
- The float versions (suffix F) of what exp, tanh, sigmoid and erfc need,
  for the float32 activations: shorter series, rounded once to float.
"""
from decimal import Decimal as D, getcontext
from fractions import Fraction
from math import factorial

getcontext().prec = 100
TINY = D(10) ** -95


def arctan_inverse(n):
    x = D(1) / n
    total, term, k = x, x, 1
    while abs(term) > TINY:
        term *= -x * x
        k += 2
        total += term / k
    return total


PI = 4 * (4 * arctan_inverse(5) - arctan_inverse(239))  # Machin's formula
LN2 = D(2).ln()
SQRT_PI = PI.sqrt()


def hexfloat(value):
    """The double nearest to a Decimal, as a C hex literal (exact)."""
    return float(Fraction(value)).hex()


def head(value, bits):
    """value truncated to `bits` significant bits, exactly, as a Fraction."""
    f = Fraction(value)
    exponent = 0
    while abs(f) >= 2 ** bits:
        f /= 2
        exponent += 1
    while abs(f) < 2 ** (bits - 1):
        f *= 2
        exponent -= 1
    return Fraction(int(f)) * Fraction(2) ** exponent


def split(value, bits, parts):
    """Heads of `bits` bits each (truncated), then the rest rounded to double."""
    out, rest = [], Fraction(value)
    for _ in range(parts - 1):
        h = head(D(rest.numerator) / D(rest.denominator), bits)
        out.append(h)
        rest -= h
    out.append(rest)
    return [float(p).hex() for p in out]


def erf_one(x):
    """erf(x) for 0 <= x <= 5 by the series without cancellation."""
    total, term, n, q = x, x, 0, 2 * x * x
    while term > total * TINY:
        n += 1
        term = term * q / (2 * n + 1)
        total += term
    return 2 / SQRT_PI * (-x * x).exp() * total


def erf_taylor(count):
    out, factorial = [], D(1)
    for n in range(count):
        if n:
            factorial *= n
        out.append((-1) ** n * 2 / (SQRT_PI * factorial * (2 * n + 1)))
    return out


def cos(x):
    x = D(x)
    x -= 2 * PI * (x / (2 * PI)).to_integral_value()
    total, term, k = D(1), D(1), 0
    while abs(term) > TINY:
        k += 2
        term *= -x * x / (k * (k - 1))
        total += term
    return total


def erfcx(a):
    """exp(a^2) erfc(a) for a >= 0: the series below 7, the continued fraction above."""
    if a < 7:
        return (1 - erf_one(a)) * (a * a).exp()
    f = a
    for k in range(400, 0, -1):
        f = a + (D(k) / 2) / f
    return 1 / (SQRT_PI * f)


def erfcx_polynomial(degree):
    """erfcx(a) = t P(s) with t = 2 / (2 + a), s = 2 t - 1 = (2 - a) / (2 + a):
    P interpolates erfcx(a) / t at the Chebyshev points of s in [-1, 1]
    (a from infinity to 0), then is written in powers of s."""
    count = degree + 1
    nodes = [cos(PI * (k + D("0.5")) / count) for k in range(count)]

    def g(s):
        t = (s + 1) / 2
        return erfcx(2 / t - 2) / t

    values = [g(s) for s in nodes]
    cheb = [sum(values[k] * cos(PI * j * (k + D("0.5")) / count) for k in range(count)) * 2 / count
            for j in range(count)]
    cheb[0] /= 2
    # T_0 = 1, T_1 = s, T_k+1 = 2 s T_k - T_k-1, as coefficient lists
    powers = [D(0)] * count
    previous, current = [D(1)] + [D(0)] * degree, [D(0), D(1)] + [D(0)] * (degree - 1)
    for i in range(count):
        powers[i] += cheb[0] * previous[i] + cheb[1] * current[i]
    for k in range(2, count):
        following = [(2 * current[i - 1] if i else D(0)) - previous[i] for i in range(count)]
        previous, current = current, following
        for i in range(count):
            powers[i] += cheb[k] * current[i]
    return powers


def taylor(first, count, step, lead, factorial):
    """Coefficients of x^first, x^(first+step), ...: lead (-1)^n / (first + n step)!
    (or / (first + n step)) for n = 0, 1, ..., with lead = 1 or -1, or with
    lead = 0 all positive."""
    out = []
    for n in range(count):
        power = first + n * step
        denominator = D(1)
        if factorial:
            for k in range(2, power + 1):
                denominator *= k
        else:
            denominator = D(power)
        out.append(hexfloat((D(lead) * (-1) ** n if lead else D(1)) / denominator))
    return out


def hexfloat32(value):
    """The float nearest to a Decimal or Fraction (ties to even), as a C hex
    literal: rounded once from the exact value, not through a double."""
    f = Fraction(value)
    if f == 0:
        return "0x0p+0f"
    exponent = 0
    while abs(f) >= 2 ** 24:
        f /= 2
        exponent += 1
    while abs(f) < 2 ** 23:
        f *= 2
        exponent -= 1
    whole = round(f)  # Python's round of a Fraction is to nearest, ties to even
    mantissa, power = float(Fraction(whole) * Fraction(2) ** exponent).hex().split("p")
    return mantissa.rstrip("0").rstrip(".") + "p" + power + "f"


def array(name, values, per_line=3, kind="double"):
    lines = [f"constexpr {kind} {name}[] = {{"]
    for i in range(0, len(values), per_line):
        lines.append("    " + ", ".join(values[i:i + per_line]) + ",")
    lines.append("};")
    return "\n".join(lines)


def main():
    print("// Generated by lib/core/math_constants.py; do not edit. Exact values")
    print("// at 100 digits, rounded once to double.")
    print("#pragma once")
    print("namespace ffn::math::constants {")
    pio2 = split(PI / 2, 33, 3)
    print(f"constexpr double kPiOver2[] = {{{', '.join(pio2)}}};  // 33-bit heads, then the rest")
    print(f"constexpr double kPiOver2Pair[] = {{{', '.join(split(PI / 2, 53, 2))}}};  // head truncated to 53 bits, then the rest")
    print(f"constexpr double kTwoOverPi = {hexfloat(2 / PI)};")
    ln2 = split(LN2, 32, 2)
    print(f"constexpr double kLn2[] = {{{', '.join(ln2)}}};  // a 32-bit head, then the rest")
    print(f"constexpr double kLn2Pair[] = {{{', '.join(split(LN2, 53, 2))}}};  // head truncated to 53 bits, then the rest")
    print(f"constexpr double kInvLn2 = {hexfloat(1 / LN2)};")
    print(f"constexpr double kInvLn10 = {hexfloat(1 / D(10).ln())};")
    print(f"constexpr double kInvSqrtPi = {hexfloat(1 / SQRT_PI)};")
    # exp(r) - 1 on |r| <= ln(2)/2: r^15/15! < 1e-19 is left out.
    print(array("kExpm1Taylor", taylor(2, 13, 1, 0, True)) + "  // 1/n!, n = 2..14")
    # sin and cos on |r| <= pi/4: the first term left out is below 1e-19.
    print(array("kSinTaylor", taylor(3, 8, 2, -1, True)) + "  // (-1)^n/(2n+1)!, n = 1..8")
    print(array("kCosTaylor", taylor(4, 8, 2, 1, True)) + "  // (-1)^n/(2n)!, n = 2..9")
    # atan on |a| <= tan(pi/16): a^25/25 < 1e-18 is left out.
    print(array("kAtanTaylor", taylor(3, 11, 2, -1, False)) + "  // (-1)^n/(2n+1), n = 1..11")
    # log(1+f) = 2 atanh(s), s = f/(2+f), |s| <= 0.1716: s^25 is left out.
    print(array("kAtanhSeries", [hexfloat(2 / D(2 * n + 1)) for n in range(1, 12)]) + "  // 2/(2n+1), n = 1..11")
    # |x| < 1: 19 terms leave less than 1e-18 of erf(x) / x.
    print(array("kErfTaylor", [hexfloat(v) for v in erf_taylor(20)]))
    # erfc(a) = exp(-a^2) t P(s) on all of a >= 0: degree 28 leaves
    # coefficients below 1e-17 (the fit itself is within 4e-16 of erfcx in
    # double arithmetic, measured by tests/core/test_math.cpp).
    print(array("kErfcxPolynomial", [hexfloat(v) for v in erfcx_polynomial(28)]) + "  // powers of s, from s^0")
    # float: ln 2 with a 16-bit head (k * head exact for |k| <= 2^8); exp(r) - 1
    # on |r| <= ln(2)/2 to r^8/8! (r^9/9! is below 2^-30 of it); erfcx to
    # degree 12 (within 2e-9 of erfcx, a thirtieth of float's rounding).
    ln2_head = head(LN2, 16)
    print(f"constexpr float kLn2F[] = {{{hexfloat32(ln2_head)}, {hexfloat32(Fraction(LN2) - ln2_head)}}};  // a 16-bit head, then the rest")
    print(f"constexpr float kInvLn2F = {hexfloat32(1 / LN2)};")
    factorials = [Fraction(1, factorial(n)) for n in range(2, 9)]
    print(array("kExpm1TaylorF", [hexfloat32(v) for v in factorials], kind="float") + "  // 1/n!, n = 2..8")
    print(array("kErfcxPolynomialF", [hexfloat32(v) for v in erfcx_polynomial(12)], kind="float") + "  // powers of s, from s^0")
    print("}  // namespace ffn::math::constants")


if __name__ == "__main__":
    main()
