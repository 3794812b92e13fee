#include "analysis/units.h"

#include <algorithm>
#include <cmath>
#include <span>

#include "core/error.h"

namespace ffn::analysis {

template <class T>
std::vector<UnitProfile> profile_units(const nn::MLP<T>& mlp, const nn::Matrix<T>& inputs,
                                       const std::vector<std::vector<double>>& directions, double half_max) {
    const auto& up = mlp.layers.at(0);
    const std::size_t m = up.out_features(), d = up.in_features(), n = directions.size();
    if (inputs.shape()[1] != d) throw Error("profile_units: the inputs' width is not the model's");
    for (const auto& f : directions)
        if (f.size() != d) throw Error("profile_units: a direction's length is not the model's width");
    std::vector<UnitProfile> units(m);

    const nn::Matrix<T> Z = nn::apply(up, inputs);
    const std::size_t rows = inputs.shape()[0];
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < m; ++j) units[j].firing += Z.data()[r * m + j] > T(0);
    if (rows > 0)
        for (auto& u : units) u.firing /= static_cast<double>(rows);

    // Row 0 the zero input, rows 1..n the features, n+1..2n their negatives.
    nn::Matrix<T> P = nn::Matrix<T>::from_shape({2 * n + 1, d});
    std::fill(P.begin(), P.end(), T(0));
    for (std::size_t i = 0; i < n; ++i)
        for (std::size_t k = 0; k < d; ++k) {
            P.data()[(1 + i) * d + k] = static_cast<T>(directions[i][k]);
            P.data()[(1 + n + i) * d + k] = static_cast<T>(-directions[i][k]);
        }
    nn::Matrix<T> H = nn::apply(up, P);
    nn::activate_inplace(mlp.activation, std::span<T>(H.data(), H.size()));

    std::vector<double> response(n);
    for (std::size_t j = 0; j < m; ++j) {
        const double h0 = H.data()[j];
        double top = 0, sum = 0;
        std::size_t best = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double plus = H.data()[(1 + i) * m + j], minus = H.data()[(1 + n + i) * m + j];
            response[i] = (std::abs(plus - h0) + std::abs(minus - h0)) / 2;
            sum += response[i];
            if (response[i] > top) top = response[i], best = i;
        }
        UnitProfile& u = units[j];
        if (top > 0) {
            u.selectivity = top / sum;
            u.features = static_cast<std::size_t>(
                std::count_if(response.begin(), response.end(), [&](double r) { return r >= half_max * top; }));
            u.best_feature = best;
        }
        const T* w = up.weight.data() + j * d;
        double ww = 0;
        for (std::size_t k = 0; k < d; ++k) ww += static_cast<double>(w[k]) * w[k];
        if (ww == 0) continue;
        for (const auto& f : directions) {
            double dot = 0, ff = 0;
            for (std::size_t k = 0; k < d; ++k) dot += static_cast<double>(w[k]) * f[k], ff += f[k] * f[k];
            if (ff > 0) u.alignment = std::max(u.alignment, std::abs(dot) / std::sqrt(ww * ff));
        }
    }
    return units;
}

template <class T>
AblationEffect ablate_unit(const nn::MLP<T>& mlp, const nn::Matrix<T>& X, std::size_t j, double replacement,
                           const std::vector<double>& q) {
    if (mlp.layers.size() != 2) throw Error("ablate_unit: the MLP must have one hidden layer");
    const auto& up = mlp.layers[0];
    const auto& down = mlp.layers[1];
    const std::size_t m = up.out_features(), d = down.out_features();
    if (j >= m) throw Error("ablate_unit: no such hidden unit");
    if (q.size() != d) throw Error("ablate_unit: the readout's length is not the output width");
    nn::Matrix<T> H = nn::apply(up, X);
    nn::activate_inplace(mlp.activation, std::span<T>(H.data(), H.size()));
    const nn::Matrix<T> Y = nn::apply(down, H);
    const std::size_t rows = H.shape()[0];
    // The replacement as the model holds it (a T), so that the prediction
    // is about the arithmetic, not about a cast.
    const double r = static_cast<double>(static_cast<T>(replacement));
    std::vector<double> h(rows);
    for (std::size_t i = 0; i < rows; ++i) {
        h[i] = H.data()[i * m + j];
        H.data()[i * m + j] = static_cast<T>(r);
    }
    const nn::Matrix<T> Y2 = nn::apply(down, H);
    double qc = 0;
    for (std::size_t k = 0; k < d; ++k) qc += q[k] * static_cast<double>(down.weight.data()[k * m + j]);
    AblationEffect e{rows, d, std::vector<double>(rows * d), std::vector<double>(rows), std::vector<double>(rows)};
    for (std::size_t i = 0; i < rows; ++i) {
        double readout = 0;
        for (std::size_t k = 0; k < d; ++k) {
            const double dy = static_cast<double>(Y2.data()[i * d + k]) - static_cast<double>(Y.data()[i * d + k]);
            e.output_change[i * d + k] = dy;
            readout += q[k] * dy;
        }
        e.readout_recomputed[i] = readout;
        e.readout_predicted[i] = (r - h[i]) * qc;
    }
    return e;
}

template AblationEffect ablate_unit<float>(const nn::MLP<float>&, const nn::Matrix<float>&, std::size_t, double,
                                           const std::vector<double>&);
template AblationEffect ablate_unit<double>(const nn::MLP<double>&, const nn::Matrix<double>&, std::size_t, double,
                                            const std::vector<double>&);
template std::vector<UnitProfile> profile_units<float>(const nn::MLP<float>&, const nn::Matrix<float>&,
                                                       const std::vector<std::vector<double>>&, double);
template std::vector<UnitProfile> profile_units<double>(const nn::MLP<double>&, const nn::Matrix<double>&,
                                                        const std::vector<std::vector<double>>&, double);

}  // namespace ffn::analysis
