#pragma once
// Input-output Jacobian of an MLP at one input: for one hidden layer,
// J = W_down diag(act'(W_up x + b_up)) W_up (doc 000's B diag(1[Ax+a>0]) A).
#include "nn/mlp.h"

namespace ffn::analysis {

template <class T>
nn::Matrix<T> mlp_jacobian(const nn::MLP<T>& mlp, const nn::Vector<T>& x);

}  // namespace ffn::analysis
