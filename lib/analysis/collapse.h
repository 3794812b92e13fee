#pragma once
// Without its activation an MLP is one affine map (doc 001): W_L ... W_1 x
// plus a folded bias. This builds that single layer from the MLP's weights,
// through the layers' own products.
#include "nn/mlp.h"

namespace ffn::analysis {

template <class T>
nn::Linear<T> collapse_to_linear(const nn::MLP<T>& mlp);

}  // namespace ffn::analysis
