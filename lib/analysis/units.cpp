#include "analysis/units.h"

#include <algorithm>
#include <array>
#include <optional>
#include <cmath>
#include <span>
#include <type_traits>

#include "core/error.h"
#include "analysis/kernels/grid_kernels.h"
#include "core/isa.h"
#include "gemm/gemm.h"

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
    nn::Matrix<T> H = nn::apply(mlp.layers[0], X);
    nn::activate_inplace(mlp.activation, std::span<T>(H.data(), H.size()));
    return ablate_unit(H, nn::apply(mlp.layers[1], H), mlp.layers[1], j, replacement, q);
}

template <class T>
AblationEffect ablate_unit(nn::Matrix<T>& H, const nn::Matrix<T>& Y, const nn::Linear<T>& down, std::size_t j,
                           double replacement, const std::vector<double>& q) {
    const std::size_t m = down.in_features(), d = down.out_features();
    if (H.shape()[1] != m || Y.shape()[0] != H.shape()[0] || Y.shape()[1] != d)
        throw Error("ablate_unit: the hidden values' or outputs' shape is not the down projection's");
    if (j >= m) throw Error("ablate_unit: no such hidden unit");
    if (q.size() != d) throw Error("ablate_unit: the readout's length is not the output width");
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
    for (std::size_t i = 0; i < rows; ++i) H.data()[i * m + j] = static_cast<T>(h[i]);  // exact: h came from T
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

template <class T>
AblationEffect edit_direction(nn::Matrix<T>& H, const nn::Matrix<T>& Y, const nn::Linear<T>& down, const std::vector<double>& u,
                              std::optional<double> set_to, const std::vector<double>& q) {
    const std::size_t m = down.in_features(), d = down.out_features(), rows = H.shape()[0];
    if (H.shape()[1] != m || Y.shape()[0] != rows || Y.shape()[1] != d)
        throw Error("edit_direction: the hidden values' or outputs' shape is not the down projection's");
    if (u.size() != m) throw Error("edit_direction: the direction's length is not the hidden width");
    if (q.size() != d) throw Error("edit_direction: the readout's length is not the output width");
    double norm = 0;
    for (double x : u) norm += x * x;
    norm = std::sqrt(norm);
    if (!(norm > 0) || !std::isfinite(norm)) throw Error("edit_direction: the direction is zero or not finite");
    std::vector<double> unit(m);
    for (std::size_t k = 0; k < m; ++k) unit[k] = u[k] / norm;
    const nn::Matrix<T> kept = H;
    std::vector<double> change(rows);
    for (std::size_t i = 0; i < rows; ++i) {
        T* h = H.data() + i * m;
        double a = 0;
        for (std::size_t k = 0; k < m; ++k) a += static_cast<double>(h[k]) * unit[k];
        change[i] = set_to.value_or(0.0) - a;
        for (std::size_t k = 0; k < m; ++k) h[k] = static_cast<T>(static_cast<double>(h[k]) + change[i] * unit[k]);
    }
    const nn::Matrix<T> Y2 = nn::apply(down, H);
    // The prediction (W_down^T q).(h' - h) uses the edit as the model holds
    // it (in T): it is about the layer's arithmetic, not about a cast.
    AblationEffect e{rows, d, std::vector<double>(rows * d), std::vector<double>(rows), std::vector<double>(rows)};
    std::vector<double> wq(m);  // W_down^T q
    for (std::size_t o = 0; o < d; ++o)
        for (std::size_t k = 0; k < m; ++k) wq[k] += q[o] * static_cast<double>(down.weight.data()[o * m + k]);
    for (std::size_t i = 0; i < rows; ++i) {
        double readout = 0, predicted = 0;
        for (std::size_t o = 0; o < d; ++o) {
            const double dy = static_cast<double>(Y2.data()[i * d + o]) - static_cast<double>(Y.data()[i * d + o]);
            e.output_change[i * d + o] = dy;
            readout += q[o] * dy;
        }
        for (std::size_t k = 0; k < m; ++k)
            predicted += wq[k] * (static_cast<double>(H.data()[i * m + k]) - static_cast<double>(kept.data()[i * m + k]));
        e.readout_recomputed[i] = readout;
        e.readout_predicted[i] = predicted;
    }
    H = kept;
    return e;
}

template <class T>
std::vector<double> hidden_direction_of(const nn::Linear<T>& down, const std::vector<double>& r) {
    const std::size_t m = down.in_features(), d = down.out_features();
    if (r.size() != d) throw Error("hidden_direction_of: the direction's length is not the output width");
    std::vector<double> u(m);
    for (std::size_t o = 0; o < d; ++o)
        for (std::size_t k = 0; k < m; ++k) u[k] += r[o] * static_cast<double>(down.weight.data()[o * m + k]);
    double norm = 0;
    for (double x : u) norm += x * x;
    if (!(norm > 0)) return {};
    for (double& x : u) x /= std::sqrt(norm);
    return u;
}

template <class T>
HiddenValues hidden_values(const nn::Matrix<T>& H) {
    HiddenValues out{H.shape()[0], H.shape()[1], {}};
    out.h.assign(H.data(), H.data() + H.size());
    return out;
}

namespace {

// A labelling as the rows of each group, in order: [0] the rows labelled
// 0 (group b), [1] those labelled 1 (group a).
struct Groups {
    std::vector<std::uint32_t> rows[2];
    explicit Groups(const std::vector<char>& label) {
        for (std::size_t r = 0; r < label.size(); ++r) rows[label[r] ? 1 : 0].push_back(static_cast<std::uint32_t>(r));
    }
};

// The contrasts of columns [j0, j0 + n) (n <= kBlock), written to
// effect[0..n) and, when given, mean_a and mean_b: each group's sum and
// sum of squares per column over its rows in order, so that any block of
// columns gets the bits of the whole. `h` points at column j0 of row 0,
// rows `ld` apart (a HiddenValues, or a packed block of its columns). A
// whole block goes through the family's vectorised loop, a narrower one
// through the same sums in scalar.
constexpr std::size_t kBlock = kernels::kGroupBlock;
template <class In>
void contrast_block(const In* h, std::size_t ld, const Groups& groups, std::size_t n, double* effect, double* mean_a = nullptr,
                    double* mean_b = nullptr) {
    static const PerIsa<kernels::GridFamily> builds{kernels::avx512_grid(), kernels::avx2_grid(), kernels::ref_grid()};
    double sum[2][kBlock] = {}, sq[2][kBlock] = {}, count[2];
    for (int g = 0; g < 2; ++g) {
        const auto& rows = groups.rows[g];
        count[g] = static_cast<double>(rows.size());
        if (n == kBlock) {
            if constexpr (std::is_same_v<In, float>) builds.active().group_sums_f32(h, ld, rows.data(), rows.size(), sum[g], sq[g]);
            else builds.active().group_sums(h, ld, rows.data(), rows.size(), sum[g], sq[g]);
            continue;
        }
        for (const std::uint32_t r : rows)
            for (std::size_t b = 0; b < n; ++b) {
                const double x = h[r * ld + b];
                sum[g][b] += x;
                sq[g][b] += x * x;
            }
    }
    for (std::size_t b = 0; b < n; ++b) {
        double var[2];
        for (int g = 0; g < 2; ++g) {
            const double mean = sum[g][b] / count[g];
            var[g] = std::max(0.0, (sq[g][b] - count[g] * mean * mean) / (count[g] - 1));
        }
        const double a = sum[1][b] / count[1], c = sum[0][b] / count[0];
        if (mean_a) mean_a[b] = a;
        if (mean_b) mean_b[b] = c;
        const double pooled = std::sqrt((var[0] + var[1]) / 2);
        effect[b] = pooled > 0 ? (a - c) / pooled : 0.0;
    }
}

// One unit's column, gathered, for the held-out tests of a few winners.
HiddenValues column(const HiddenValues& H, std::size_t j) {
    HiddenValues c{H.rows, 1, std::vector<double>(H.rows)};
    for (std::size_t r = 0; r < H.rows; ++r) c.h[r] = H.h[r * H.m + j];
    return c;
}

}  // namespace

Contrasts unit_contrasts(const HiddenValues& H, const std::vector<char>& label) {
    Contrasts c{std::vector<double>(H.m), std::vector<double>(H.m), std::vector<double>(H.m)};
    const Groups groups(label);
    for (std::size_t j0 = 0; j0 < H.m; j0 += kBlock)
        contrast_block(H.h.data() + j0, H.m, groups, std::min(kBlock, H.m - j0), &c.effect[j0], &c.mean_a[j0], &c.mean_b[j0]);
    return c;
}

PermutationCounts permutation_test(const HiddenValues& discovery, const std::vector<char>& label, const Contrasts& found,
                                   const HiddenValues& held_out, const std::vector<char>& held_label, const Contrasts& again,
                                   const std::vector<std::size_t>& winners, std::size_t permutations, Rng& shuffle) {
    const std::size_t top = winners.size(), m = discovery.m, blocks = (m + kBlock - 1) / kBlock;
    PermutationCounts out{std::vector<std::size_t>(top), std::vector<std::size_t>(top), std::vector<std::size_t>(top)};
    std::vector<HiddenValues> held_columns;
    for (const std::size_t j : winners) held_columns.push_back(column(held_out, j));
    // Each block of columns packed with its rows contiguous: a block's pass
    // then streams one stretch of memory, not one page per row. Values that
    // are all floats (a float32 model's) are packed as floats: half the
    // bytes, the same sums.
    const std::size_t rows = discovery.rows;
    const bool floats = std::all_of(discovery.h.begin(), discovery.h.end(),
                                    [](double x) { return static_cast<double>(static_cast<float>(x)) == x || std::isnan(x); });
    std::vector<double> packed(floats ? 0 : rows * m);
    std::vector<float> packed_f32(floats ? rows * m : 0);
    gemm::parallel_ranges(blocks, 2, [&](std::size_t begin, std::size_t end) {
        for (std::size_t t = begin; t < end; ++t) {
            const std::size_t j0 = t * kBlock, n = std::min(kBlock, m - j0);
            for (std::size_t r = 0; r < rows; ++r)
                for (std::size_t b = 0; b < n; ++b) {
                    const double x = discovery.h[r * m + j0 + b];
                    if (floats) packed_f32[j0 * rows + r * n + b] = static_cast<float>(x);
                    else packed[j0 * rows + r * n + b] = x;
                }
        }
    });
    // Relabellings in chunks: drawn in order on this thread, then each
    // chunk's contrasts over column blocks on every thread, each block
    // holding its columns in cache across the chunk's relabellings.
    constexpr std::size_t kChunk = 64;
    std::vector<Groups> relabels, held_relabels;
    std::vector<char> relabel = label, held_relabel = held_label;
    std::vector<double> largest(kChunk * blocks), own(kChunk * top), held(kChunk * top);
    for (std::size_t p0 = 0; p0 < permutations; p0 += kChunk) {
        const std::size_t chunk = std::min(kChunk, permutations - p0);
        relabels.clear();
        held_relabels.clear();
        for (std::size_t p = 0; p < chunk; ++p) {
            shuffle.shuffle(relabel);
            relabels.emplace_back(relabel);
            shuffle.shuffle(held_relabel);
            held_relabels.emplace_back(held_relabel);
        }
        gemm::parallel_ranges(blocks + top, 2, [&](std::size_t begin, std::size_t end) {
            double effect[kBlock];
            for (std::size_t t = begin; t < end; ++t) {
                if (t < blocks) {
                    const std::size_t j0 = t * kBlock, n = std::min(kBlock, m - j0);
                    for (std::size_t p = 0; p < chunk; ++p) {
                        if (floats) contrast_block(packed_f32.data() + j0 * rows, n, relabels[p], n, effect);
                        else contrast_block(packed.data() + j0 * rows, n, relabels[p], n, effect);
                        double big = 0;
                        for (std::size_t b = 0; b < n; ++b) big = std::max(big, std::abs(effect[b]));
                        largest[p * blocks + t] = big;
                        for (std::size_t w = 0; w < top; ++w)
                            if (winners[w] >= j0 && winners[w] < j0 + n) own[p * top + w] = effect[winners[w] - j0];
                    }
                } else {
                    const std::size_t w = t - blocks;
                    for (std::size_t p = 0; p < chunk; ++p) {
                        contrast_block(held_columns[w].h.data(), 1, held_relabels[p], 1, effect);
                        held[p * top + w] = effect[0];
                    }
                }
            }
        });
        for (std::size_t p = 0; p < chunk; ++p) {
            const double big = *std::max_element(largest.begin() + static_cast<std::ptrdiff_t>(p * blocks),
                                                  largest.begin() + static_cast<std::ptrdiff_t>((p + 1) * blocks));
            for (std::size_t w = 0; w < top; ++w) {
                const std::size_t j = winners[w];
                const double sign = found.effect[j] >= 0 ? 1.0 : -1.0;
                out.beats_max[w] += big >= std::abs(found.effect[j]);
                out.beats_own[w] += std::abs(own[p * top + w]) >= std::abs(found.effect[j]);
                out.beats_held[w] += sign * held[p * top + w] >= sign * again.effect[j];
            }
        }
    }
    return out;
}

template AblationEffect ablate_unit<float>(const nn::MLP<float>&, const nn::Matrix<float>&, std::size_t, double,
                                           const std::vector<double>&);
template AblationEffect ablate_unit<double>(const nn::MLP<double>&, const nn::Matrix<double>&, std::size_t, double,
                                            const std::vector<double>&);
template AblationEffect ablate_unit<float>(nn::Matrix<float>&, const nn::Matrix<float>&, const nn::Linear<float>&, std::size_t,
                                           double, const std::vector<double>&);
template AblationEffect ablate_unit<double>(nn::Matrix<double>&, const nn::Matrix<double>&, const nn::Linear<double>&, std::size_t,
                                            double, const std::vector<double>&);
template AblationEffect edit_direction<float>(nn::Matrix<float>&, const nn::Matrix<float>&, const nn::Linear<float>&,
                                              const std::vector<double>&, std::optional<double>, const std::vector<double>&);
template AblationEffect edit_direction<double>(nn::Matrix<double>&, const nn::Matrix<double>&, const nn::Linear<double>&,
                                               const std::vector<double>&, std::optional<double>, const std::vector<double>&);
template std::vector<double> hidden_direction_of<float>(const nn::Linear<float>&, const std::vector<double>&);
template std::vector<double> hidden_direction_of<double>(const nn::Linear<double>&, const std::vector<double>&);
template HiddenValues hidden_values<float>(const nn::Matrix<float>&);
template HiddenValues hidden_values<double>(const nn::Matrix<double>&);
template std::vector<UnitProfile> profile_units<float>(const nn::MLP<float>&, const nn::Matrix<float>&,
                                                       const std::vector<std::vector<double>>&, double);
template std::vector<UnitProfile> profile_units<double>(const nn::MLP<double>&, const nn::Matrix<double>&,
                                                        const std::vector<std::vector<double>>&, double);

}  // namespace ffn::analysis
