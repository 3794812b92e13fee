#pragma once
// A 1-m-1 ReLU net on a dense uniform grid, and the slope changes of a
// function sampled on one (analysis/kinks.h), as loops the compiler
// vectorises: every point's operations are the scalar ones in the scalar
// order (multiplies and adds rounded separately, -ffp-contract=off), so
// every build (kernels/<isa>/grid_<isa>.cpp) gives the same bits.
//
// Internal linkage on purpose, as in train/kernels/narrow_kernel.h.
#include <cmath>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "analysis/kernels/grid_kernels.h"

namespace ffn::analysis {
namespace {
namespace grid {

// y[k] = c + sum_j v_j relu(w_j x_k + b_j), x_k = lo + dx k, the units in
// order for each point, four to a pass over the points so that y streams
// through memory a quarter as often.
// The point index is an int32 when made a double (the kinds refuse grids
// past 10^7 points): x86 converts those in vectors, 64-bit ones only with
// AVX-512DQ. The weights are copied out first, so the compiler knows y's
// stores leave them alone.
void relu_net(const double* w, const double* b, const double* v, std::size_t m, double c, double lo, double dx,
              std::size_t points, double* __restrict y) {
    const auto n = static_cast<std::int32_t>(points);
    for (std::int32_t k = 0; k < n; ++k) y[k] = c;
    std::size_t j = 0;
    for (; j + 4 <= m; j += 4) {
        const double w0 = w[j], w1 = w[j + 1], w2 = w[j + 2], w3 = w[j + 3];
        const double b0 = b[j], b1 = b[j + 1], b2 = b[j + 2], b3 = b[j + 3];
        const double v0 = v[j], v1 = v[j + 1], v2 = v[j + 2], v3 = v[j + 3];
        for (std::int32_t k = 0; k < n; ++k) {
            const double x = lo + dx * static_cast<double>(k);
            const double z0 = w0 * x + b0, z1 = w1 * x + b1, z2 = w2 * x + b2, z3 = w3 * x + b3;
            y[k] = (((y[k] + v0 * (z0 > 0 ? z0 : 0.0)) + v1 * (z1 > 0 ? z1 : 0.0)) + v2 * (z2 > 0 ? z2 : 0.0)) +
                   v3 * (z3 > 0 ? z3 : 0.0);
        }
    }
    for (; j < m; ++j) {
        const double wj = w[j], bj = b[j], vj = v[j];
        for (std::int32_t k = 0; k < n; ++k) {
            const double z = wj * (lo + dx * static_cast<double>(k)) + bj;
            y[k] += vj * (z > 0 ? z : 0.0);
        }
    }
}

// Slope changes above `tolerance` between neighbouring intervals, runs of
// adjacent ones counted once: slope_k = (y[k+1] - y[k]) / dx, a change at
// k when |slope_k - slope_{k-1}| > tolerance, counted where the one before
// is not a change.
int slope_changes(const double* y, std::size_t points, double dx, double tolerance) {
    if (points < 3) return 0;
    // The slopes, then the changes, each a loop without a carried value.
    thread_local std::vector<double> slope;
    thread_local std::vector<unsigned char> change;
    slope.resize(points - 1);
    change.resize(points - 1);
    double* __restrict s = slope.data();
    unsigned char* __restrict c = change.data();
    for (std::size_t k = 0; k + 1 < points; ++k) s[k] = (y[k + 1] - y[k]) / dx;
    c[0] = 0;
    for (std::size_t k = 1; k + 1 < points; ++k) c[k] = std::fabs(s[k] - s[k - 1]) > tolerance;
    int n = 0;
    for (std::size_t k = 1; k + 1 < points; ++k) n += c[k] & (c[k - 1] ^ 1);
    return n;
}

// Written with GCC's vector types (one lane a column): every lane's adds
// and multiplies are the scalar ones, rounded separately, whatever width
// the build has. float values widen exactly, so a float block gives the
// bits of the same values as doubles, from half the bytes.
using Lanes = double __attribute__((vector_size(kernels::kGroupBlock * sizeof(double))));
using FloatLanes = float __attribute__((vector_size(kernels::kGroupBlock * sizeof(float))));

template <class In, class Load>
void sum_rows(const In* __restrict h, std::size_t ld, const std::uint32_t* __restrict rows, std::size_t count,
              double* __restrict sum, double* __restrict sq, Load load) {
    Lanes s = {}, q = {};
    for (std::size_t i = 0; i < count; ++i) {
        const Lanes x = load(h + rows[i] * ld);
        s += x;
        q += x * x;
    }
    std::memcpy(sum, &s, sizeof s);
    std::memcpy(sq, &q, sizeof q);
}

void group_sums(const double* h, std::size_t ld, const std::uint32_t* rows, std::size_t count, double* sum, double* sq) {
    sum_rows(h, ld, rows, count, sum, sq, [](const double* p) {
        Lanes x;
        std::memcpy(&x, p, sizeof x);
        return x;
    });
}

void group_sums_f32(const float* h, std::size_t ld, const std::uint32_t* rows, std::size_t count, double* sum, double* sq) {
    sum_rows(h, ld, rows, count, sum, sq, [](const float* p) {
        FloatLanes x;
        std::memcpy(&x, p, sizeof x);
        return __builtin_convertvector(x, Lanes);
    });
}

inline kernels::GridFamily this_build() { return {relu_net, slope_changes, group_sums, group_sums_f32}; }

}  // namespace grid
}  // namespace
}  // namespace ffn::analysis
