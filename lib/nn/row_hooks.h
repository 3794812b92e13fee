#pragma once
// The feed-forward blocks' gemm-epilogue hooks (nn::RowHook), shared by
// each block and its batched form: the kept derivative of MLP, the gate
// products of GatedMLP. Indices are i * columns
// + j0 + k into matrices of the output's shape (for BatchedMLP, the stack of
// the instances' outputs, whose rows gemm_batched numbers across the stack).
#include <algorithm>
#include <cstdint>
#include <span>

#include "nn/activation.h"

namespace ffn::nn::hooks {

// An activation and the matrix its hook keeps: act'(z) for activate_rows
// and times_derivative_rows, z itself for keep_input_and_activate_rows.
template <class T>
struct KeptRows {
    Activation activation;
    T* kept;
    std::int64_t columns;
};

// z -> act(z) in place, act'(z) into the kept matrix.
template <class T>
void activate_rows(T* z, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const KeptRows<T>*>(p);
    const auto length = static_cast<std::size_t>(n);
    activate_keeping_derivative<T>(c->activation, std::span<T>(z, length),
                                   std::span<T>(c->kept + i * c->columns + j0, length));
}

// dL/dh -> dL/dz = dL/dh * act'(z), with the kept act'(z).
template <class T>
void times_derivative_rows(T* g, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const KeptRows<T>*>(p);
    const T* __restrict d = c->kept + i * c->columns + j0;
    for (std::int64_t k = 0; k < n; ++k) g[k] = g[k] * d[k];
}

// The gated block's elementwise work, done in the epilogues of the products
// that produce its operands (on every gemm thread, on tiles still in
// cache) rather than in passes of their own over [tokens, hidden]. Each
// value gets the operations the plain loops gave it, in the same order.
template <class T>
struct GateProduct {  // forward: h = act(g) * u, in the epilogue of u = up(x)
    const T* act_gate;
    T* hidden;
    std::int64_t columns;
};

template <class T>
void gate_product_rows(T* u, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const GateProduct<T>*>(p);
    const T* __restrict a = c->act_gate + i * c->columns + j0;
    T* __restrict h = c->hidden + i * c->columns + j0;
    for (std::int64_t k = 0; k < n; ++k) h[k] = a[k] * u[k];
}

// backward: with dh = dL/dh in the epilogue of dh = dY W_down, dL/du = dh *
// act(g) replaces dh in place and dL/dg = dh * u * act'(g) goes to d_gate,
// act'(g) kept by the forward pass for a smooth activation (the same bits
// as evaluating it here), else found from the kept g.
template <class T>
struct GateBackward {
    Activation activation;
    bool kept_is_derivative;
    const T* act_gate;
    const T* up;
    const T* kept;  // act'(g), or g
    T* d_gate;
    std::int64_t columns;
};

template <class T>
void gate_backward_rows(T* dh, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const GateBackward<T>*>(p);
    const std::int64_t at = i * c->columns + j0;
    const T* __restrict a = c->act_gate + at;
    const T* __restrict u = c->up + at;
    const T* __restrict kept = c->kept + at;
    T* __restrict dg = c->d_gate + at;
    if (c->kept_is_derivative) {
        for (std::int64_t k = 0; k < n; ++k) {
            dg[k] = dh[k] * u[k] * kept[k];
            dh[k] = dh[k] * a[k];
        }
        return;
    }
    for (std::int64_t k = 0; k < n; ++k) {
        dg[k] = dh[k] * u[k];
        dh[k] = dh[k] * a[k];
    }
    const auto length = static_cast<std::size_t>(n);
    multiply_by_derivative<T>(c->activation, std::span<const T>(kept, length), std::span<T>(dg, length));
}

// Keeps z (unless kept is null) and applies act in place: linear_forward's
// epilogue for an activation the SIMD finish does not fuse.
template <class T>
void keep_input_and_activate_rows(T* z, std::int64_t i, std::int64_t j0, std::int64_t n, void* p) {
    const auto* c = static_cast<const KeptRows<T>*>(p);
    if (c->kept) std::copy(z, z + n, c->kept + i * c->columns + j0);
    activate_inplace<T>(c->activation, std::span<T>(z, static_cast<std::size_t>(n)));
}

}  // namespace ffn::nn::hooks
