#pragma once
// The toy models' input draws and fused step (toy_kernel.h), one build per
// family of core/isa.h: kernels/ref/ for any x86-64, kernels/avx2/ and
// kernels/avx512/ with their instructions. Every build gives the same bits.
#include "train/toy_model.h"

namespace ffn::train::kernels {

struct ToyFamily {
    void (*draw_f32)(const toy_model::Draw&, float*);
    void (*draw_f64)(const toy_model::Draw&, double*);
    void (*step_f32)(const toy_model::FusedStep<float>&);
    void (*step_f64)(const toy_model::FusedStep<double>&);
};

ToyFamily ref_toy();
ToyFamily avx2_toy();
ToyFamily avx512_toy();

}  // namespace ffn::train::kernels
