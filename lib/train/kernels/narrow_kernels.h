#pragma once
// The narrow trainer's pass (narrow_kernel.h), one build per family of
// core/isa.h: kernels/ref/ for any x86-64 and kernels/avx2/ with eight
// instances to a block, kernels/avx512/ with sixteen. Every build and lane
// count gives the same bits.
#include <cstddef>

#include "train/narrow_fit.h"

namespace ffn::train::kernels {

struct NarrowFamily {
    void (*f32)(const NarrowPass<float>&);
    void (*f64)(const NarrowPass<double>&);
    std::size_t lanes;  // instances to a block
};

NarrowFamily ref_narrow();
NarrowFamily avx2_narrow();
NarrowFamily avx512_narrow();

}  // namespace ffn::train::kernels
