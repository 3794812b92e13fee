// unit_contrast: document 003's lab ("inspect MLP responses") with the
// discipline its warnings ask for (claim S7). A model is trained on the
// planted-feature task (experiments/support/planted_task.h); two
// labelled groups of inputs are drawn, once for discovery and once held
// out. Units are ranked by their standardised contrast on the discovery
// split, the winners' p-values corrected for the number of units searched
// (a permutation test of the largest contrast), and each winner's contrast
// re-measured on the held-out split; then each winner is ablated and the
// change of the output and of a linear readout stated, with the immediate
// readout identity -h_j q.c_j checked against recomputation. The planted
// model knows which units read the feature: the ground truth a real model
// never gives.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fmt/format.h>
#include <numeric>

#include "analysis/units.h"
#include "core/stats.h"
#include "experiments/support/planted_task.h"
#include "runner/experiment.h"

namespace ffn::experiments::unit_contrast {

namespace {

using report::Cell;
using report::ColumnType;

const std::vector<std::string> kGroups = {"feature", "random"};
const std::vector<std::string> kReplacements = {"zero", "mean"};
// The per-run counts the survival table sums over seeds.
constexpr const char* kCounts[] = {"winners", "naive_significant", "significant", "survived", "winners_planted", "survived_planted"};

// Post-activations of the hidden layer, rows x m, in float64.
struct Hidden {
    std::size_t rows = 0, m = 0;
    std::vector<double> h;
    double at(std::size_t r, std::size_t j) const { return h[r * m + j]; }
};

template <class T>
Hidden hidden_of(const nn::MLP<T>& mlp, const nn::Matrix<T>& X) {
    nn::Matrix<T> H = nn::apply(mlp.layers[0], X);
    nn::activate_inplace(mlp.activation, std::span<T>(H.data(), H.size()));
    Hidden out{H.shape()[0], H.shape()[1], {}};
    out.h.assign(H.data(), H.data() + H.size());
    return out;
}

// Per unit: the means of rows labelled 1 (group a) and 0 (group b), and
// the standardised contrast (mean_a - mean_b) / sqrt((var_a + var_b) / 2)
// with sample variances; 0 for a unit constant over both groups.
struct Contrasts {
    std::vector<double> mean_a, mean_b, effect;
};

Contrasts contrasts(const Hidden& H, const std::vector<char>& label) {
    const std::size_t m = H.m;
    std::vector<double> sum[2] = {std::vector<double>(m), std::vector<double>(m)};
    std::vector<double> sq[2] = {std::vector<double>(m), std::vector<double>(m)};
    double count[2] = {0, 0};
    for (std::size_t r = 0; r < H.rows; ++r) {
        const int g = label[r] ? 1 : 0;
        count[g] += 1;
        const double* row = H.h.data() + r * m;
        for (std::size_t j = 0; j < m; ++j) {
            sum[g][j] += row[j];
            sq[g][j] += row[j] * row[j];
        }
    }
    Contrasts c{std::vector<double>(m), std::vector<double>(m), std::vector<double>(m)};
    for (std::size_t j = 0; j < m; ++j) {
        double var[2];
        for (int g = 0; g < 2; ++g) {
            const double mean = sum[g][j] / count[g];
            var[g] = std::max(0.0, (sq[g][j] - count[g] * mean * mean) / (count[g] - 1));
        }
        c.mean_a[j] = sum[1][j] / count[1];
        c.mean_b[j] = sum[0][j] / count[0];
        const double pooled = std::sqrt((var[0] + var[1]) / 2);
        c.effect[j] = pooled > 0 ? (c.mean_a[j] - c.mean_b[j]) / pooled : 0.0;
    }
    return c;
}

// `rows` labels, the first half 1 (group a), the rest 0.
std::vector<char> halves(std::size_t rows) {
    std::vector<char> label(rows, 0);
    std::fill(label.begin(), label.begin() + static_cast<std::ptrdiff_t>(rows / 2), 1);
    return label;
}

// The two groups of one split stacked, group a first.
template <class T>
nn::Matrix<T> stack(const nn::Matrix<T>& a, const nn::Matrix<T>& b) {
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({a.shape()[0] + b.shape()[0], a.shape()[1]});
    std::copy(a.begin(), a.end(), X.begin());
    std::copy(b.begin(), b.end(), X.begin() + static_cast<std::ptrdiff_t>(a.size()));
    return X;
}

// An ablation's effect over the held-out rows (group a the first half):
// the RMS over rows of |y' - y|, the mean readout change in each group,
// the mean predicted and recomputed readout change, and the largest
// difference of the two on any row.
struct Ablation {
    double output_change = 0, readout_a = 0, readout_b = 0, predicted = 0, recomputed = 0, identity_error = 0;
};

Ablation summarize(const analysis::AblationEffect& e) {
    Ablation a;
    const std::size_t half = e.rows / 2;
    for (std::size_t r = 0; r < e.rows; ++r) {
        for (std::size_t k = 0; k < e.outputs; ++k) a.output_change += e.output_change[r * e.outputs + k] * e.output_change[r * e.outputs + k];
        (r < half ? a.readout_a : a.readout_b) += e.readout_recomputed[r];
        a.predicted += e.readout_predicted[r];
        a.recomputed += e.readout_recomputed[r];
        a.identity_error = std::max(a.identity_error, std::abs(e.readout_predicted[r] - e.readout_recomputed[r]));
    }
    const double n = static_cast<double>(e.rows);
    a.output_change = std::sqrt(a.output_change / n);
    a.readout_a /= static_cast<double>(half);
    a.readout_b /= static_cast<double>(e.rows - half);
    a.predicted /= n;
    a.recomputed /= n;
    return a;
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    const planted::Task<T> task = planted::make_task<T>(run);
    nn::MLP<T> mlp = planted::make_model<T>(run);
    const train::FitRecord record = planted::train_model(run, mlp, task);
    const planted::Fit fit = planted::score(mlp, task, record);

    // The groups: inputs holding `feature` at a clear strength against
    // inputs without it, the rest of each input drawn as in training; or,
    // for "random", both groups from the training distribution, so that
    // any contrast is chance.
    const auto k = static_cast<std::size_t>(run.integer("feature"));
    const auto n = static_cast<std::size_t>(run.integer("group_samples"));
    const bool by_feature = run.string("groups") == "feature";
    Rng draws = Rng::stream(run.seed, fnv1a64(planted::task_name(run) + fmt::format(" feature={}", k)), "contrast");
    nn::Matrix<T> split[2];  // discovery, held out
    for (auto& X : split) {
        nn::Matrix<T> a, b, ya, yb;
        planted::draw_rows(task, draws, n, a, ya, by_feature ? std::optional<planted::Forced>({k, true}) : std::nullopt);
        planted::draw_rows(task, draws, n, b, yb, by_feature ? std::optional<planted::Forced>({k, false}) : std::nullopt);
        X = stack(a, b);
    }
    const Hidden discovery = hidden_of(mlp, split[0]), held_out = hidden_of(mlp, split[1]);
    const std::vector<char> label = halves(2 * n);
    const Contrasts found = contrasts(discovery, label), again = contrasts(held_out, label);
    const std::size_t m = discovery.m, top = static_cast<std::size_t>(run.integer("top"));  // validate keeps top <= m

    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return std::abs(found.effect[x]) > std::abs(found.effect[y]); });
    order.resize(top);

    // Uncorrected (the trap): how often a relabelling gives the winner
    // itself a contrast as large, as if it had been chosen beforehand.
    // Corrected for the search: how often a relabelling's largest |contrast|
    // over all m units reaches the winner's. Held out: how often a
    // relabelling reaches the winner's own held-out |contrast|, times the
    // number of winners (Bonferroni: `top` hypotheses fixed before looking).
    const auto permutations = static_cast<std::size_t>(run.integer("permutations"));
    Rng shuffle = Rng::stream(run.seed, fnv1a64(planted::task_name(run)), "permutation");
    std::vector<std::size_t> beats_max(top, 0), beats_own(top, 0), beats_held(top, 0);
    std::vector<char> relabel = label;
    for (std::size_t p = 0; p < permutations; ++p) {
        shuffle.shuffle(relabel);
        const Contrasts c = contrasts(discovery, relabel);
        double largest = 0;
        for (double e : c.effect) largest = std::max(largest, std::abs(e));
        shuffle.shuffle(relabel);
        const Contrasts h = contrasts(held_out, relabel);
        for (std::size_t w = 0; w < top; ++w) {
            beats_max[w] += largest >= std::abs(found.effect[order[w]]);
            beats_own[w] += std::abs(c.effect[order[w]]) >= std::abs(found.effect[order[w]]);
            beats_held[w] += std::abs(h.effect[order[w]]) >= std::abs(again.effect[order[w]]);
        }
    }
    const double alpha = run.number("alpha");
    const auto p_of = [&](std::size_t beats) { return (1.0 + static_cast<double>(beats)) / (1.0 + static_cast<double>(permutations)); };

    // The ground truth: which units read the feature, by their responses to
    // one feature alone after training.
    const std::vector<analysis::UnitProfile> profile = analysis::profile_units(mlp, task.x_probe, task.directions);
    const std::vector<double>& q = task.directions[k];  // the readout: the feature's own direction
    const bool mean_replace = run.string("replace") == "mean";

    report::Table chosen("chosen");
    chosen.add_column("rank", ColumnType::integer).add_column("unit", ColumnType::integer);
    for (const char* c : {"mean_a", "mean_b", "contrast_discovery", "p_uncorrected", "p_corrected", "contrast_held_out", "p_held_out"})
        chosen.add_column(c, ColumnType::real, 4);
    chosen.add_column("survived", ColumnType::boolean).add_column("best_feature", ColumnType::integer);
    for (const char* c : {"alignment", "output_change", "readout_change_a", "readout_change_b", "readout_predicted",
                          "readout_recomputed", "identity_error"})
        chosen.add_column(c, ColumnType::real, 4);
    chosen.add_key("rank");
    std::int64_t survived = 0, survived_planted = 0, winners_planted = 0, significant = 0, naive = 0;
    double identity_error = 0;
    for (std::size_t w = 0; w < top; ++w) {
        const std::size_t j = order[w];
        const double p_corrected = p_of(beats_max[w]);
        const double p_held = std::min(1.0, static_cast<double>(top) * p_of(beats_held[w]));
        const bool same_sign = (found.effect[j] > 0) == (again.effect[j] > 0) && again.effect[j] != 0;
        const bool survives = same_sign && p_held < alpha;
        const bool planted_unit = profile[j].best_feature && *profile[j].best_feature == k;
        double replacement = 0;
        if (mean_replace) {
            for (std::size_t r = 0; r < held_out.rows; ++r) replacement += held_out.at(r, j);
            replacement /= static_cast<double>(held_out.rows);
        }
        const Ablation ab = summarize(analysis::ablate_unit(mlp, split[1], j, replacement, q));
        double align = 0, ww = 0, dot = 0;
        for (std::size_t c = 0; c < q.size(); ++c) {
            const double wc = mlp.layers[0].weight.data()[j * q.size() + c];
            ww += wc * wc;
            dot += wc * q[c];
        }
        if (ww > 0) align = std::abs(dot) / std::sqrt(ww);
        survived += survives;
        survived_planted += survives && planted_unit;
        winners_planted += planted_unit;
        significant += p_corrected < alpha;
        naive += p_of(beats_own[w]) < alpha;
        identity_error = std::max(identity_error, ab.identity_error);
        chosen.add_row({static_cast<std::int64_t>(w + 1), static_cast<std::int64_t>(j), found.mean_a[j], found.mean_b[j],
                        found.effect[j], p_of(beats_own[w]), p_corrected, again.effect[j], p_held, survives,
                        profile[j].best_feature ? Cell{static_cast<std::int64_t>(*profile[j].best_feature)} : Cell{}, align,
                        ab.output_change, ab.readout_a, ab.readout_b, ab.predicted, ab.recomputed, ab.identity_error});
    }
    std::int64_t planted_units = 0;
    for (const auto& u : profile) planted_units += u.best_feature && *u.best_feature == k;

    report::Table r("run");
    r.add_column("status", ColumnType::text).add_column("probe_nmse", ColumnType::real, 4).add_column("learned", ColumnType::boolean);
    for (const char* c : {"winners", "naive_significant", "significant", "survived", "planted_units", "winners_planted", "survived_planted"})
        r.add_column(c, ColumnType::integer);
    r.add_column("identity_error", ColumnType::real, 3);
    r.add_row({record.status, fit.usable ? Cell{fit.nmse} : Cell{}, fit.learned, static_cast<std::int64_t>(top), naive, significant,
               survived, planted_units, winners_planted, survived_planted, identity_error});
    return {r, chosen};
}

std::vector<report::Table> run_contrast(const runner::Run& run) {
    return with_dtype(run, [&]<class T>() { return compute<T>(run); });
}

// Per swept point, summed over its seeds: the winners, how many pass the
// corrected test on discovery, how many survive held out, and how many of
// those the planted truth calls the feature's units; said in words too.
std::vector<report::Table> aggregate(runner::Aggregation& a) {
    report::Table t("survival");
    a.add_swept_columns(t);
    t.add_column("seeds", ColumnType::integer).add_column("not_learned", ColumnType::integer);
    for (const char* c : kCounts) t.add_column(c, ColumnType::integer);
    t.add_column("survived_share", ColumnType::real, 3).add_column("identity_error_max", ColumnType::real, 3);
    t.add_column("reading", ColumnType::text);
    for (const auto& group : a.seed_groups()) {
        std::int64_t seeds = 0, not_learned = 0, sums[std::size(kCounts)] = {};
        double identity = 0;
        for (std::size_t i : group) {
            const report::Table& r = a.per_run[i].front();
            if (r.at(0, "learned") != Cell{true}) {  // a model that learned nothing has nothing to inspect
                ++not_learned;
                continue;
            }
            ++seeds;
            for (std::size_t c = 0; c < std::size(kCounts); ++c) sums[c] += static_cast<std::int64_t>(*report::as_number(r.at(0, kCounts[c])));
            identity = std::max(identity, *report::as_number(r.at(0, "identity_error")));
        }
        auto row = a.swept_cells(group.front());
        row.insert(row.end(), {seeds, not_learned});
        for (auto s : sums) row.push_back(s);
        const std::int64_t winners = sums[0], survived = sums[3], survived_planted = sums[5];
        row.push_back(winners > 0 ? Cell{static_cast<double>(survived) / static_cast<double>(winners)} : Cell{});
        row.push_back(seeds > 0 ? Cell{identity} : Cell{});
        row.push_back(fmt::format("{} of {} discovery winners survive held out; {} of those read the feature most", survived,
                                  winners, survived_planted));
        t.add_row(std::move(row));
    }
    report::Table runs = a.per_run_rows();
    std::vector<report::Table> joined = a.concatenate_runs();
    auto chosen = std::find_if(joined.begin(), joined.end(), [](const report::Table& x) { return x.name() == "chosen"; });
    chosen->set_long_form();
    return {t, std::move(*chosen), runs};
}

}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    planted::add_keys(schema);
    schema.add({.path = "groups", .type = KeyType::string, .default_value = "feature", .choices = kGroups,
                .help = "feature: inputs holding `feature` against inputs without it; random: both from the training inputs (a null)"});
    schema.add({.path = "feature", .type = KeyType::integer, .default_value = 0, .min = 0.0, .max = 4095.0,
                .help = "the planted feature whose presence splits the groups, and whose direction is the readout q"});
    schema.add({.path = "group_samples", .type = KeyType::integer, .default_value = 512, .min = 2.0, .max = 1e6,
                .help = "inputs per group in each split (discovery, held out)"});
    schema.add({.path = "top", .type = KeyType::integer, .default_value = 5, .min = 1.0, .max = 16384.0,
                .help = "units chosen on discovery, by |standardised contrast|"});
    schema.add({.path = "permutations", .type = KeyType::integer, .default_value = 999, .min = 1.0, .max = 1e6,
                .help = "relabellings of each permutation test"});
    schema.add({.path = "alpha", .type = KeyType::number, .default_value = 0.05, .min = 0.0, .max = 1.0,
                .help = "significance level of the corrected and the held-out tests"});
    schema.add({.path = "replace", .type = KeyType::string, .default_value = "zero", .choices = kReplacements,
                .help = "an ablated unit's value: 0, or its mean over the held-out inputs"});
    return {.name = "unit_contrast",
            .description = "units chosen by contrast on discovery inputs, corrected for the search, confirmed on held-out ones, ablated; on a planted-feature model",
            .schema = std::move(schema),
            .headlines = {{"survival", {"seeds", "winners", "naive_significant", "significant", "survived", "reading"}}},
            .validate =
                [](const runner::Plan& plan) {
                    for (const auto& r : plan.runs) {
                        if (r.integer("feature") >= r.integer("features"))
                            throw Error(fmt::format("key 'feature': {} is not one of the {} planted features (0 to {})",
                                                    r.integer("feature"), r.integer("features"), r.integer("features") - 1));
                        if (r.integer("top") > r.integer("m"))
                            throw Error(fmt::format("key 'top': {} units cannot be chosen from the {} hidden units", r.integer("top"), r.integer("m")));
                    }
                    planted::refuse_bad_tasks(plan, [](const runner::Run& r) { return 4.0 * static_cast<double>(r.integer("group_samples")); });
                },
            .run = run_contrast,
            .aggregate = aggregate,
            // Training, then two permutation tests over both splits.
            .cost = [](const runner::Run& r) {
                return planted::training_cost(r) + 4.0 * static_cast<double>(r.integer("permutations") * r.integer("group_samples") * r.integer("m"));
            }};
}

}  // namespace ffn::experiments::unit_contrast
