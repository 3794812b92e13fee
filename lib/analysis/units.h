#pragma once
// What the hidden units of a trained (or untrained) MLP respond to, where
// the features of its inputs are known: the planted directions of a
// synthetic task, the ground truth a real model never gives.
#include <cstddef>
#include <optional>
#include <vector>

#include "core/rng.h"
#include "nn/mlp.h"

namespace ffn::analysis {

struct UnitProfile {
    double firing = 0;  // share of the inputs with a positive pre-activation (claim S1's "positive")
    // From the unit's responses to one feature alone (see profile_units);
    // empty for a unit that no such input moves.
    std::optional<double> selectivity;
    std::optional<std::size_t> features, best_feature;
    double alignment = 0;  // max_i |cos(read vector, f_i)|; 0 for a zero read vector or direction
};

// The units of the first layer of `mlp` (d -> m, then its activation), on
// `inputs` (rows of d) and against `directions` (n vectors of d; the
// responses are to each as given, so unit length makes them comparable).
// A unit j's response to feature i is
//     R_ji = (|h_j(f_i) - h_j(0)| + |h_j(-f_i) - h_j(0)|) / 2,
// the feature alone at unit strength either way; its selectivity is
// max_i R_ji / sum_i R_ji (1: one feature explains it, 1/n: all alike),
// its features those with R_ji >= half_max * max_i R_ji, its best feature
// the argmax (the first, on a tie). In float64 from the model's T.
template <class T>
std::vector<UnitProfile> profile_units(const nn::MLP<T>& mlp, const nn::Matrix<T>& inputs,
                                       const std::vector<std::vector<double>>& directions, double half_max = 0.5);

// Unit j of a two-layer `mlp` (d -> m -> d_out) set to `replacement` on
// every row of X, the rest of the model as it is: per row, the change of
// the output y' - y, of a linear readout q.(y' - y) recomputed from it, and
// the readout's change as the down projection predicts it at once,
// (replacement - h_j) q.c_j with c_j the unit's write vector (column j of
// the down weights): doc 003's "-h_j q.c_j" for replacement 0. The two
// readout figures differ by the rounding of the outputs only.
struct AblationEffect {
    std::size_t rows = 0, outputs = 0;
    std::vector<double> output_change;  // rows x outputs, row-major
    std::vector<double> readout_recomputed, readout_predicted;  // per row
};
template <class T>
AblationEffect ablate_unit(const nn::MLP<T>& mlp, const nn::Matrix<T>& X, std::size_t j, double replacement,
                           const std::vector<double>& q);
// The same for any layer whose output Y is down(H): H the hidden values it
// reads (a gated layer's act(gate) * up), rows x m, and Y = down(H) as
// computed once for all the units ablated. H's column j is replaced for
// the ablated product and put back before returning (no copy of H).
template <class T>
AblationEffect ablate_unit(nn::Matrix<T>& H, const nn::Matrix<T>& Y, const nn::Linear<T>& down, std::size_t j,
                           double replacement, const std::vector<double>& q);

// An edit of the hidden values along a direction u of the hidden space
// (m values, unit length after normalising): per row, the coefficient
// a = h.u is projected out (h' = h - a u) or set to `value`
// (h' = h + (value - a) u); everything else of the layer as it is. Reported
// as for an ablation: the output change, the readout's change q.(y' - y)
// recomputed, and as the down projection predicts it at once,
// (W_down^T q).(h' - h) = (target - a) q.(W_down u) up to the rounding of
// h' to T. H is put back before returning.
template <class T>
AblationEffect edit_direction(nn::Matrix<T>& H, const nn::Matrix<T>& Y, const nn::Linear<T>& down, const std::vector<double>& u,
                              std::optional<double> set_to, const std::vector<double>& q);

// The hidden direction whose write reaches furthest along an output
// direction r (d values): W_down^T r, normalised; empty when it is zero
// (the layer writes nothing along r).
template <class T>
std::vector<double> hidden_direction_of(const nn::Linear<T>& down, const std::vector<double>& r);

// ---------------------------------------------------------------------------
// Contrasting two groups of inputs unit by unit (document 003's lab), with
// the permutation tests that keep a search over units honest.

// Hidden values, rows x m, in float64.
struct HiddenValues {
    std::size_t rows = 0, m = 0;
    std::vector<double> h;
    double at(std::size_t r, std::size_t j) const { return h[r * m + j]; }
};
template <class T>
HiddenValues hidden_values(const nn::Matrix<T>& H);

// Per unit: the means of rows labelled 1 (group a) and 0 (group b), and
// the standardised contrast (mean_a - mean_b) / sqrt((var_a + var_b) / 2)
// with sample variances; 0 for a unit constant within each group, which
// has no standardised contrast. Each group needs two rows.
struct Contrasts {
    std::vector<double> mean_a, mean_b, effect;
};
Contrasts unit_contrasts(const HiddenValues& H, const std::vector<char>& label);

// `permutations` relabellings of each split (shuffled in turn by `shuffle`,
// discovery then held out, each from the last), counting per winner w
// (unit winners[w], chosen on discovery with contrast found.effect):
//   beats_own:  relabellings whose |contrast| of the winner itself reaches
//               its discovery |contrast| (uncorrected: as if chosen blind);
//   beats_max:  relabellings whose largest |contrast| over all m units
//               reaches it (corrected for the search);
//   beats_held: held-out relabellings whose contrast, in the direction
//               discovery fixed, reaches the winner's held-out contrast.
// The counts are those of relabelling and recomputing unit_contrasts in
// full, bit for bit; the work is spread over the threads gemm uses.
struct PermutationCounts {
    std::vector<std::size_t> beats_own, beats_max, beats_held;
};
PermutationCounts permutation_test(const HiddenValues& discovery, const std::vector<char>& label, const Contrasts& found,
                                   const HiddenValues& held_out, const std::vector<char>& held_label, const Contrasts& again,
                                   const std::vector<std::size_t>& winners, std::size_t permutations, Rng& shuffle);

}  // namespace ffn::analysis
