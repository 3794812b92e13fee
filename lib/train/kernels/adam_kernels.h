#pragma once
// Adam's elementwise update (adam_kernel.h), one build per family of
// core/isa.h, so that its fused multiply-adds are instructions where the
// CPU has them.
#include <cstddef>

namespace ffn::train {

// One step's constants, in the parameters' type.
template <class T>
struct AdamStep {
    T beta1, beta2, one_minus_beta1, one_minus_beta2;
    T step_size;              // lr / (1 - beta1^t)
    T bias_correction2_sqrt;  // sqrt(1 - beta2^t)
    T eps;
    T decay;         // 1 - lr wd, for AdamW
    T weight_decay;  // for Adam's L2 term
    int decay_form;  // 0: none, 1: AdamW's, 2: Adam's L2 term
};

namespace kernels {

struct AdamFamily {
    void (*f32)(const AdamStep<float>&, std::size_t begin, std::size_t end, float* p, const float* grad, float* m, float* v);
    void (*f64)(const AdamStep<double>&, std::size_t begin, std::size_t end, double* p, const double* grad, double* m,
                double* v);
};

AdamFamily ref_adam();
AdamFamily avx2_adam();
AdamFamily avx512_adam();

}  // namespace kernels
}  // namespace ffn::train
