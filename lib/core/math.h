#pragma once
// The elementary functions of ffn-lab: exp, log, sin, erf ... computed with
// +, -, *, / and sqrt only (all correctly rounded by IEEE 754), in a fixed
// order, without fused multiply-adds. Their bits are therefore the same on
// every CPU, compiler and C library; the C library's are not (glibc picks
// FMA or non-FMA code paths at run time, other systems have other
// algorithms), and a last-bit difference in an initial weight grows into a
// different trained network. Everything that feeds a result (the normal
// draws of initialisation, activations, losses, schedules, the target
// expressions of width_sweep) uses these, never <cmath>'s.
//
// Accuracy: within a few units in the last place of the exact value (the
// tests measure the bound per function against the C library, which is
// within one), but for pow with a non-integer or large y, which is
// exp(y log x): within about 2 |y ln x| + 3 units (pow(10, 300) is 604 units
// off). Constants come from lib/core/math_constants.py at 100 digits.
// Special values follow C's Annex F where it matters to a caller: NaN in,
// NaN out; overflow to infinity; a domain error gives NaN.
//
// sin, cos and tan reduce their argument with three parts of pi/2, which is
// accurate for |x| < 2^20 (about 10^6); beyond that they return NaN rather
// than an inaccurate number.

namespace ffn::math {

double exp(double x);
double expm1(double x);  // exp(x) - 1, accurate near 0
double log(double x);
double log1p(double x);  // log(1 + x), accurate near 0
double log2(double x);
double log10(double x);
double pow(double x, double y);

double sin(double x);
double cos(double x);
double tan(double x);
double atan(double x);
double atan2(double y, double x);
double asin(double x);
double acos(double x);

double sinh(double x);
double cosh(double x);
double tanh(double x);
double asinh(double x);
double acosh(double x);
double atanh(double x);

double erf(double x);
double erfc(double x);  // 1 - erf(x), accurate where erf(x) is near 1

// 1 / (1 + exp(-x))
double sigmoid(double x);

}  // namespace ffn::math
