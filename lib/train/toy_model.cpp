#include "train/toy_model.h"

#include "core/isa.h"
#include "train/kernels/toy_kernels.h"

namespace ffn::train::toy_model {

namespace {

// The registry's row for the toy models' kernels.
const PerIsa<kernels::ToyFamily>& toy_builds() {
    static const PerIsa<kernels::ToyFamily> table{kernels::avx512_toy(), kernels::avx2_toy(), kernels::ref_toy()};
    return table;
}

}  // namespace

template <class T>
void draw_batch(const Draw& d, T* x) {
    if constexpr (sizeof(T) == 4) toy_builds().active().draw_f32(d, x);
    else toy_builds().active().draw_f64(d, x);
}

template <class T>
void fused_gradient(const FusedStep<T>& step) {
    if constexpr (sizeof(T) == 4) toy_builds().active().step_f32(step);
    else toy_builds().active().step_f64(step);
}

template <class T>
Stack<T>::Stack(const Shape& shape, std::vector<std::uint64_t> keys, std::vector<T> initial_W, double density,
                std::vector<double> importance, double lr)
    : shape_(shape), keys_(std::move(keys)), density_(density), importance_(std::move(importance)), W_(std::move(initial_W)),
      b_(shape.instances * shape.n, T(0)), gW_(W_.size()), gb_(b_.size()),
      x_(fits_fused(shape) ? 0 : shape.instances * shape.n * shape.batch),
      optimizer_({{"W", {shape.instances, shape.m, shape.n}, W_.data(), gW_.data()}, {"b", {shape.instances, shape.n}, b_.data(), gb_.data()}},
                 {OptimizerKind::adam, lr}) {}

template <class T>
void Stack<T>::step() {
    if (fits_fused(shape_)) {
        fused_gradient<T>({shape_, step_, keys_.data(), density_, importance_.data(), W_.data(), b_.data(), gW_.data(), gb_.data()});
    } else {
        const std::size_t batch_values = shape_.n * shape_.batch;
        for (std::size_t r = 0; r < shape_.instances; ++r)
            draw_batch<T>({keys_[r], step_, shape_.n, shape_.batch, density_}, x_.data() + r * batch_values);
        gradient<T>(shape_, W_.data(), b_.data(), x_.data(), importance_.data(), gW_.data(), gb_.data(), work_);
    }
    optimizer_.step();
    ++step_;
}

template class Stack<float>;
template class Stack<double>;
template void draw_batch<float>(const Draw&, float*);
template void draw_batch<double>(const Draw&, double*);
template void fused_gradient<float>(const FusedStep<float>&);
template void fused_gradient<double>(const FusedStep<double>&);

}  // namespace ffn::train::toy_model
