#include "nn/residual.h"

#include "core/error.h"

namespace ffn::nn {

template <class T>
PreNormResidual<T>::PreNormResidual(std::unique_ptr<Module<T>> n, std::unique_ptr<Module<T>> f)
    : norm(std::move(n)), ffn(std::move(f)) {
    if (!ffn) throw Error("PreNormResidual needs a feed-forward module");
}

template <class T>
const Matrix<T>& PreNormResidual<T>::forward(const Matrix<T>& X) {
    const Matrix<T>& u = norm ? norm->forward(X) : X;
    const Matrix<T>& f = ffn->forward(u);
    ensure_shape(out_, X.shape()[0], X.shape()[1]);
    for (std::size_t i = 0; i < out_.size(); ++i) out_.data()[i] = X.data()[i] + f.data()[i];
    return out_;
}

template <class T>
const Matrix<T>& PreNormResidual<T>::backward(const Matrix<T>& dY, bool need_input_grad) {
    // The ffn's input gradient is needed whenever a norm sits below it, for
    // the norm's own parameters.
    const Matrix<T>& du = ffn->backward(dY, need_input_grad || norm != nullptr);
    if (!need_input_grad) {
        if (norm) norm->backward(du, false);
        input_grad_ = Matrix<T>();
        return input_grad_;
    }
    const Matrix<T>& dx_branch = norm ? norm->backward(du, true) : du;
    ensure_shape(input_grad_, dY.shape()[0], dY.shape()[1]);
    for (std::size_t i = 0; i < input_grad_.size(); ++i) input_grad_.data()[i] = dY.data()[i] + dx_branch.data()[i];
    return input_grad_;
}

template <class T>
void PreNormResidual<T>::collect_parameters(const std::string& prefix, std::vector<ParamRef<T>>& out) {
    if (norm) norm->collect_parameters(prefix + "norm.", out);
    ffn->collect_parameters(prefix + "ffn.", out);
}

template class PreNormResidual<float>;
template class PreNormResidual<double>;

}  // namespace ffn::nn
