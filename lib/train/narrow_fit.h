#pragma once
// Many small models trained as one computation: 1-m-1 MLPs (one input, one
// hidden layer of m units with biases, one output), all of the same width
// and activation, fitted to the same samples by full-batch MSE steps. The
// width sweep trains a hundred seeds of one width this way.
//
// Instances sit in the lanes of a vector register (narrow_lanes() of them
// per block), so that a width of 2 fills the register instead of 2 of its
// lanes, and nothing of the [samples, m] activations is kept beyond one
// sample. Every lane computes what one instance alone computes, in the same
// order: training a net in a batch gives it the same bits as training it
// alone (train/kernels/narrow_kernel.h states the order). The optimizer is the
// library's own, over the flat block of all instances' parameters, so
// every update formula of train::Optimizer applies unchanged.
//
// The arithmetic differs from train::fit on the same MLP (whose gemm calls
// sum in other orders): the two agree to rounding, not to the bit.
#include <functional>
#include <span>
#include <vector>

#include "nn/mlp.h"
#include "train/fit.h"
#include "train/optimizer.h"

namespace ffn::train {

// Instances per block of the build the gemm dispatch's family selects: 16
// with AVX-512, 8 otherwise. The most is kNarrowMaxLanes; no result
// depends on the count.
inline constexpr std::size_t kNarrowMaxLanes = 16;
std::size_t narrow_lanes();

// Called after each step's update with the step (1-based) and each net's
// loss before it; the nets hold their weights of that moment while it
// runs. Returning false ends the training there, status "stopped". It
// only reads: the nets' bits are what they are without it.
using NarrowWatch = std::function<bool(long step, std::span<const double> losses)>;

// Trains each net of `nets` from its current weights on (x, y): the steps,
// record spacing, early stop and schedule of `spec` (full batch, MSE; a
// minibatch or another loss is refused), the optimizer of `optimizer`.
// A net that diverges keeps its weights from before the step whose loss
// was not finite, as train::fit leaves them. Returns one record per net.
template <class T>
std::vector<FitRecord> fit_narrow(std::span<nn::MLP<T>* const> nets, const OptimizerSpec& optimizer,
                                  std::span<const T> x, std::span<const T> y, const FitSpec& spec,
                                  const NarrowWatch& watch = {});

// The kernel's arguments (train/kernels/narrow_kernel.h): `blocks` blocks of
// `lanes` instances.
template <class T>
struct NarrowPass {
    nn::Activation activation;
    std::size_t lanes = 0, width = 0, samples = 0, blocks = 0;
    const T *x = nullptr, *target = nullptr, *params = nullptr;
    T *grads = nullptr, *residual_buf = nullptr;  // residual_buf: samples x lanes
    T* kept_buf = nullptr;  // smooth units: width x samples x 2 x lanes (train/kernels/narrow_kernel.h)
    double* squared_error = nullptr;  // blocks x lanes
};

}  // namespace ffn::train
