#include "nn/mlp.h"

#include <span>

#include "core/error.h"

namespace ffn::nn {

namespace {
std::string layer_name(std::size_t i, std::size_t count) {
    if (i == 0) return "up";
    if (i + 1 == count) return "down";
    return "mid" + std::to_string(i);
}

template <class T>
void activate_matrix(Activation a, Matrix<T>& H) {
    activate_inplace<T>(a, std::span<T>(H.data(), H.size()));
}
}  // namespace

template <class T>
MLP<T>::MLP(const std::vector<std::size_t>& widths, Activation act, bool bias) : activation(act) {
    if (widths.size() < 2) throw Error("MLP needs at least an input and an output width");
    for (std::size_t i = 0; i + 1 < widths.size(); ++i)
        layers.emplace_back(widths[i], widths[i + 1], bias);
}

template <class T>
Matrix<T> MLP<T>::forward(const Matrix<T>& X, const HiddenHook<T>& hook) const {
    Matrix<T> H = layers.front().forward(X);
    for (std::size_t i = 1; i < layers.size(); ++i) {
        activate_matrix(activation, H);
        if (hook) hook(i - 1, H);
        H = layers[i].forward(H);
    }
    return H;
}

template <class T>
std::vector<ParamRef<T>> MLP<T>::parameters() {
    std::vector<ParamRef<T>> out;
    for (std::size_t i = 0; i < layers.size(); ++i)
        layers[i].collect_parameters(layer_name(i, layers.size()) + ".", out);
    return out;
}

template <class T>
GatedMLP<T>::GatedMLP(std::size_t d, std::size_t hidden, Activation act, bool bias)
    : gate(d, hidden, bias), up(d, hidden, bias), down(hidden, d, bias), activation(act) {}

template <class T>
Matrix<T> GatedMLP<T>::forward(const Matrix<T>& X) const {
    Matrix<T> G = gate.forward(X);
    activate_matrix(activation, G);
    G *= up.forward(X);
    return down.forward(G);
}

template <class T>
std::vector<ParamRef<T>> GatedMLP<T>::parameters() {
    std::vector<ParamRef<T>> out;
    gate.collect_parameters("gate.", out);
    up.collect_parameters("up.", out);
    down.collect_parameters("down.", out);
    return out;
}

template <class T>
AttentionProjections<T>::AttentionProjections(std::size_t d, bool bias)
    : q(d, d, bias), k(d, d, bias), v(d, d, bias), o(d, d, bias) {}

template <class T>
std::vector<ParamRef<T>> AttentionProjections<T>::parameters() {
    std::vector<ParamRef<T>> out;
    q.collect_parameters("q.", out);
    k.collect_parameters("k.", out);
    v.collect_parameters("v.", out);
    o.collect_parameters("o.", out);
    return out;
}

template class MLP<float>;
template class MLP<double>;
template class GatedMLP<float>;
template class GatedMLP<double>;
template struct AttentionProjections<float>;
template struct AttentionProjections<double>;

}  // namespace ffn::nn
