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
#include <limits>
#include <memory>
#include <numeric>

#include "analysis/units.h"
#include "core/stats.h"
#include "experiments/support/planted_task.h"
#include "experiments/support/real_layer.h"
#include "experiments/unit_contrast/unit_contrast.h"
#include "runner/experiment.h"

namespace ffn::experiments::unit_contrast {

namespace {

using report::Cell;
using report::ColumnType;

const std::vector<std::string> kGroups = {"feature", "random", "given"};
const std::vector<std::string> kReplacements = {"zero", "mean"};
// The per-run counts the survival table sums over seeds.
constexpr const char* kCounts[] = {"winners", "naive_significant", "significant", "survived", "winners_planted", "survived_planted"};

using analysis::Contrasts;
using analysis::HiddenValues;

// One split's inputs, group a's rows first, and their labels (1: group a).
template <class T>
struct Split {
    nn::Matrix<T> X;
    std::size_t a = 0;
    std::vector<char> labels() const {
        std::vector<char> label(X.shape()[0], 0);
        std::fill(label.begin(), label.begin() + static_cast<std::ptrdiff_t>(a), 1);
        return label;
    }
};

// Rows [from, to) of X.
template <class T>
nn::Matrix<T> row_range(const nn::Matrix<T>& X, std::size_t from, std::size_t to) {
    const std::size_t d = X.shape()[1];
    nn::Matrix<T> out = nn::Matrix<T>::from_shape({to - from, d});
    std::copy(X.begin() + static_cast<std::ptrdiff_t>(from * d), X.begin() + static_cast<std::ptrdiff_t>(to * d), out.begin());
    return out;
}

// A config's inputs as rows of T, in an order shuffled by `rng`.
template <class T>
nn::Matrix<T> shuffled_rows(const std::vector<std::vector<double>>& rows, Rng& rng) {
    std::vector<std::size_t> order(rows.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    rng.shuffle(order);
    const std::size_t d = rows.front().size();
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({rows.size(), d});
    for (std::size_t r = 0; r < rows.size(); ++r)
        for (std::size_t k = 0; k < d; ++k) X.data()[r * d + k] = static_cast<T>(rows[order[r]][k]);
    return X;
}

// The two groups of one split stacked, group a first.
template <class T>
Split<T> stack(const nn::Matrix<T>& a, const nn::Matrix<T>& b) {
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({a.shape()[0] + b.shape()[0], a.shape()[1]});
    std::copy(a.begin(), a.end(), X.begin());
    std::copy(b.begin(), b.end(), X.begin() + static_cast<std::ptrdiff_t>(a.size()));
    return {std::move(X), a.shape()[0]};
}

// max that keeps a NaN: a run whose ablation went NaN must not report a
// clean identity error.
double max_keeping_nan(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }

// An ablation's effect over the held-out rows (group a's `in_a` rows
// first): the RMS over rows of |y' - y|, the mean readout change in each
// group, the mean predicted and recomputed readout change, and the largest
// difference of the two on any row (NaN if any row's is).
struct Ablation {
    double output_change = 0, readout_a = 0, readout_b = 0, predicted = 0, recomputed = 0, identity_error = 0;
};

Ablation summarize(const analysis::AblationEffect& e, std::size_t in_a) {
    Ablation a;
    for (std::size_t r = 0; r < e.rows; ++r) {
        for (std::size_t k = 0; k < e.outputs; ++k) a.output_change += e.output_change[r * e.outputs + k] * e.output_change[r * e.outputs + k];
        (r < in_a ? a.readout_a : a.readout_b) += e.readout_recomputed[r];
        a.predicted += e.readout_predicted[r];
        a.recomputed += e.readout_recomputed[r];
        const double gap = std::abs(e.readout_predicted[r] - e.readout_recomputed[r]);
        a.identity_error = max_keeping_nan(a.identity_error, gap);
    }
    const double n = static_cast<double>(e.rows);
    a.output_change = std::sqrt(a.output_change / n);
    a.readout_a /= static_cast<double>(in_a);
    a.readout_b /= static_cast<double>(e.rows - in_a);
    a.predicted /= n;
    a.recomputed /= n;
    return a;
}

// The smallest p-value a permutation test of `permutations` relabellings
// of `rows` inputs, `in_a` of them in group a, can give: 1 / (P + 1), or,
// where the distinct relabellings are fewer than P, about one over their
// count (a relabelling that repeats adds nothing).
double smallest_p(std::size_t rows, std::size_t in_a, std::int64_t permutations) {
    const double log_distinct = std::lgamma(static_cast<double>(rows) + 1) - std::lgamma(static_cast<double>(in_a) + 1) -
                                std::lgamma(static_cast<double>(rows - in_a) + 1);
    return std::max(1.0 / (1.0 + static_cast<double>(permutations)), std::exp(-log_distinct));
}

// What the groups, the readout, a loaded model and the tests need of each
// other, before any run starts (a checkpoint's layer is found from its
// headers; the inputs file is read whole).
void refuse_bad_settings(const runner::Run& r) {
    const bool given = r.string("groups") == "given", loaded = !r.string("weights").empty();
    if (loaded && !given)
        throw Error("key 'groups': a model from 'weights' has no planted features; give its groups as \"given\" (an 'inputs' file, or inputs_a and inputs_b)");
    const std::optional<FoundLayer> layer = checkpoint_layer(r);
    const auto d = layer ? layer->spec.d : static_cast<std::size_t>(r.integer("d"));
    const auto m = layer ? layer->spec.hidden : static_cast<std::size_t>(r.integer("m"));
    if (!given && !r.string("inputs").empty())
        throw Error(fmt::format("key 'inputs': inputs are read only with groups \"given\" (groups is \"{}\")", r.string("groups")));
    for (const char* key : {"inputs_a", "inputs_b"}) {
        const auto rows = r.matrix(key);
        if (rows.empty()) continue;
        if (!given)
            throw Error(fmt::format("key '{}': inputs are read only with groups \"given\" (groups is \"{}\")", key, r.string("groups")));
        if (!r.string("inputs").empty()) throw Error(fmt::format("key '{}': the groups come from the 'inputs' file; give them one way", key));
        if (rows.size() < 4)
            throw Error(fmt::format("key '{}': {} inputs; groups \"given\" need at least 4 a group (2 for discovery, 2 held out)", key, rows.size()));
        if (rows.front().size() != d)
            throw Error(fmt::format("key '{}': inputs of {} values, but the model reads d = {}", key, rows.front().size(), d));
        // A value the run's dtype cannot hold would turn every contrast
        // and ablation of the run into NaN.
        const double largest = r.is_float64() ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
        for (std::size_t i = 0; i < rows.size(); ++i)
            for (double x : rows[i])
                if (!(std::abs(x) <= largest))
                    throw Error(fmt::format("key '{}': row {} holds {}, beyond what {} can hold", key, i + 1, x, r.string("dtype")));
    }
    std::size_t held_a = static_cast<std::size_t>(r.integer("group_samples")), held_b = held_a, q = r.numbers("readout").size();
    if (given) {
        const std::string file = r.string("inputs");
        const GivenShape shape = file.empty() ? GivenShape{r.matrix("inputs_a").size(), r.matrix("inputs_b").size(), 0} : given_shape(file, d);
        for (const auto& [name, n] : {std::pair{"a", shape.a}, std::pair{"b", shape.b}})
            if (n < 4)
                throw Error(fmt::format("{}: group {} has {} inputs; groups \"given\" need at least 4 a group (2 for discovery, 2 held out)",
                                        file.empty() ? std::string("key 'inputs_") + name + "'" : file, name, n));
        held_a = shape.a - shape.a / 2;
        held_b = shape.b - shape.b / 2;
        if (q == 0) q = shape.readout;
    }
    if (q != 0 && q != d) throw Error(fmt::format("key 'readout': {} values, but the model writes d = {}", q, d));
    if (q == 0 && given)
        throw Error("key 'readout': groups \"given\" need a readout q of d values, in the config or as tensor 'readout' of the inputs file (there is no planted direction to use)");
    if (!loaded && r.integer("feature") >= r.integer("features"))
        throw Error(fmt::format("key 'feature': {} is not one of the {} planted features (0 to {})", r.integer("feature"),
                                r.integer("features"), r.integer("features") - 1));
    if (static_cast<std::size_t>(r.integer("top")) > m)
        throw Error(fmt::format("key 'top': {} units cannot be chosen from the {} hidden units", r.integer("top"), m));
    const double alpha = r.number("alpha");
    if (alpha <= 0 || alpha >= 1) throw Error(fmt::format("key 'alpha': {} is not a significance level (it must lie strictly between 0 and 1)", alpha));
    // A held-out test that could never pass would print "0 survive" as if
    // it were a finding.
    const double floor = static_cast<double>(r.integer("top")) * smallest_p(held_a + held_b, held_a, r.integer("permutations"));
    if (floor >= alpha)
        throw Error(fmt::format("keys 'permutations', 'top', 'alpha': the held-out test of {} winners on {} + {} inputs gives p >= {:.3g}, "
                                "never below alpha = {}; more permutations, inputs or a larger alpha",
                                r.integer("top"), held_a, held_b, floor, alpha));
}

// Computes a run: its `run` and `chosen` tables, and with every_unit a
// third, `units`, each unit's contrasts (for the figure).
template <class T, bool every_unit = false>
std::vector<report::Table> compute(const runner::Run& run) {
    // The model: trained on the planted task, or read from `weights` (then
    // the task's keys are not used and there is no ground truth): a
    // checkpoint's layer by its layout, or a d-m-d MLP by ffn-lab's or
    // nn.Sequential's names.
    std::shared_ptr<const planted::Task<T>> task;
    nn::MLP<T> mlp({static_cast<std::size_t>(run.integer("d")), static_cast<std::size_t>(run.integer("m")),
                    static_cast<std::size_t>(run.integer("d"))},
                   nn::parse_activation(run.string("activation")));
    std::optional<nn::LoadedLayer<T>> layer;
    std::string status = "loaded";
    planted::Fit fit{.usable = true, .learned = true};
    if (const auto found = checkpoint_layer(run)) {
        layer = nn::load_layer<T>(found->checkpoint, found->spec);
    } else if (!run.string("weights").empty()) {
        nn::load_weights(run.string("weights"), mlp, weight_names(run), torch_sequential_names());
    } else {
        const auto trained = planted::shared_training<T>(run);
        task = std::shared_ptr<const planted::Task<T>>(trained, &trained->task);
        mlp = trained->mlp;
        fit = trained->fit;
        status = trained->record.status;
    }
    const std::size_t d = layer ? layer->spec.d : static_cast<std::size_t>(run.integer("d"));
    const std::size_t m = layer ? layer->spec.hidden : static_cast<std::size_t>(run.integer("m"));
    const auto hidden_of = [&](const nn::Matrix<T>& X) {
        if (layer) return layer->hidden(X);
        nn::Matrix<T> H = nn::apply(mlp.layers[0], X);
        nn::activate_inplace(mlp.activation, std::span<T>(H.data(), H.size()));
        return H;
    };
    const nn::Linear<T>& down = layer ? layer->down() : mlp.layers[1];

    report::Table chosen("chosen");
    chosen.add_column("rank", ColumnType::integer).add_column("unit", ColumnType::integer);
    for (const char* c : {"mean_a", "mean_b", "contrast_discovery", "p_uncorrected", "p_corrected", "contrast_held_out", "p_held_out"})
        chosen.add_column(c, ColumnType::real, 4);
    chosen.add_column("survived", ColumnType::boolean).add_column("best_feature", ColumnType::integer);
    for (const char* c : {"alignment", "output_change", "readout_change_a", "readout_change_b", "readout_predicted",
                          "readout_recomputed", "identity_error"})
        chosen.add_column(c, ColumnType::real, 4);
    chosen.add_key("rank");
    report::Table r("run");
    r.add_column("status", ColumnType::text).add_column("probe_nmse", ColumnType::real, 4).add_column("learned", ColumnType::boolean);
    for (const char* c : kCounts) r.add_column(c, ColumnType::integer);
    r.add_column("planted_units", ColumnType::integer).add_column("identity_error", ColumnType::real, 3);
    const Cell nmse = task && fit.usable ? Cell{fit.nmse} : Cell{};
    report::Table units("units");
    units.add_column("unit", ColumnType::integer).add_column("contrast_discovery", ColumnType::real, 4);
    units.add_column("contrast_held_out", ColumnType::real, 4).add_column("rank", ColumnType::integer);
    units.add_column("survived", ColumnType::boolean).add_column("reads_feature", ColumnType::boolean);
    units.add_key("unit");
    const auto tables = [&]() { return every_unit ? std::vector<report::Table>{r, chosen, units} : std::vector<report::Table>{r, chosen}; };
    if (!fit.learned) {  // nothing to inspect in a model that did not learn the task
        r.add_row({status, nmse, false, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}});
        return tables();
    }

    // The groups: inputs holding `feature` at a clear strength against
    // inputs without it, the rest of each input drawn as in training; for
    // "random", both groups from the training distribution, so that any
    // contrast is chance; for "given", the config's two sets of inputs,
    // each shuffled and cut in two, discovery first.
    const auto k = static_cast<std::size_t>(run.integer("feature"));
    Split<T> split[2];  // discovery, held out
    std::optional<GivenGroups> given;
    if (run.string("groups") == "given") {
        Rng order = Rng::stream(run.seed, fnv1a64(fmt::format("unit_contrast d={}", d)), "split");
        given = given_groups(run, d);
        const nn::Matrix<T> A = shuffled_rows<T>(given->a, order), B = shuffled_rows<T>(given->b, order);
        const std::size_t na = A.shape()[0] / 2, nb = B.shape()[0] / 2;
        split[0] = stack(row_range(A, 0, na), row_range(B, 0, nb));
        split[1] = stack(row_range(A, na, A.shape()[0]), row_range(B, nb, B.shape()[0]));
    } else {
        const auto n = static_cast<std::size_t>(run.integer("group_samples"));
        const bool by_feature = run.string("groups") == "feature";
        Rng draws = Rng::stream(run.seed, fnv1a64(planted::task_name(run) + fmt::format(" feature={}", k)), "contrast");
        for (auto& part : split) {
            nn::Matrix<T> a, b, ya, yb;
            planted::draw_rows(*task, draws, n, a, ya, by_feature ? std::optional<planted::Forced>({k, true}) : std::nullopt);
            planted::draw_rows(*task, draws, n, b, yb, by_feature ? std::optional<planted::Forced>({k, false}) : std::nullopt);
            part = stack(a, b);
        }
    }
    nn::Matrix<T> H_discovery = hidden_of(split[0].X), H_held_out = hidden_of(split[1].X);
    const HiddenValues discovery = analysis::hidden_values(H_discovery), held_out = analysis::hidden_values(H_held_out);
    const std::vector<char> label = split[0].labels(), held_label = split[1].labels();
    const Contrasts found = analysis::unit_contrasts(discovery, label), again = analysis::unit_contrasts(held_out, held_label);
    const std::size_t top = static_cast<std::size_t>(run.integer("top"));  // validate keeps top <= m

    std::vector<std::size_t> order(m);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return std::abs(found.effect[x]) > std::abs(found.effect[y]); });
    order.resize(top);

    // Uncorrected (the trap): how often a relabelling gives the winner
    // itself a contrast as large, as if it had been chosen beforehand.
    // Corrected for the search: how often a relabelling's largest |contrast|
    // over all m units reaches the winner's. Held out: how often a
    // relabelling reaches the winner's held-out contrast in the direction
    // discovery fixed (one-sided: the direction was chosen before these
    // inputs were read), times the number of winners (Bonferroni).
    const auto permutations = static_cast<std::size_t>(run.integer("permutations"));
    Rng shuffle = Rng::stream(run.seed, fnv1a64(fmt::format("unit_contrast m={}", m)), "permutation");
    const analysis::PermutationCounts beats =
        analysis::permutation_test(discovery, label, found, held_out, held_label, again, order, permutations, shuffle);
    const double alpha = run.number("alpha");
    const auto p_of = [&](std::size_t beats) { return (1.0 + static_cast<double>(beats)) / (1.0 + static_cast<double>(permutations)); };

    // The ground truth, for a planted model: which units read the feature,
    // by their responses to one feature alone after training.
    const std::vector<analysis::UnitProfile> profile =
        task ? analysis::profile_units(mlp, task->x_probe, task->directions) : std::vector<analysis::UnitProfile>{};
    // The readout: the config's q, else the feature's own direction.
    const std::vector<double> q = !run.numbers("readout").empty() ? run.numbers("readout")
                                  : task                          ? task->directions[k]
                                                                  : given->readout;
    // Mean replacement: the unit's mean over the inputs the model was
    // trained on (the probe inputs, same distribution), not over the
    // designed groups; a loaded model's training inputs are unknown, so
    // there the held-out inputs of both groups stand in.
    const bool mean_replace = run.string("replace") == "mean";
    const HiddenValues baseline = mean_replace && task ? analysis::hidden_values(hidden_of(task->x_probe)) : HiddenValues{};
    const HiddenValues& mean_over = task ? baseline : held_out;

    const nn::Matrix<T> Y_held_out = nn::apply(down, H_held_out);
    std::int64_t survived = 0, survived_planted = 0, winners_planted = 0, significant = 0, naive = 0;
    double identity_error = 0;
    for (std::size_t w = 0; w < top; ++w) {
        const std::size_t j = order[w];
        const double p_uncorrected = p_of(beats.beats_own[w]), p_corrected = p_of(beats.beats_max[w]);
        const double p_held = std::min(1.0, static_cast<double>(top) * p_of(beats.beats_held[w]));
        const bool survives = p_held < alpha;
        const bool planted_unit = task && profile[j].best_feature && *profile[j].best_feature == k;
        double replacement = 0;
        if (mean_replace) {
            for (std::size_t i = 0; i < mean_over.rows; ++i) replacement += mean_over.at(i, j);
            replacement /= static_cast<double>(mean_over.rows);
        }
        const Ablation ab = summarize(analysis::ablate_unit(H_held_out, Y_held_out, down, j, replacement, q), split[1].a);
        // |cos| of the read vector with the feature the groups are about,
        // not profile's best match over all features: how much the unit
        // reads this one.
        Cell align;
        if (task) {
            double ww = 0, dot = 0;
            for (std::size_t c = 0; c < d; ++c) {
                const double wc = mlp.layers[0].weight.data()[j * d + c];
                ww += wc * wc;
                dot += wc * task->directions[k][c];
            }
            align = ww > 0 ? std::abs(dot) / std::sqrt(ww) : 0.0;
        }
        survived += survives;
        survived_planted += survives && planted_unit;
        winners_planted += planted_unit;
        significant += p_corrected < alpha;
        naive += p_uncorrected < alpha;
        identity_error = max_keeping_nan(identity_error, ab.identity_error);
        chosen.add_row({static_cast<std::int64_t>(w + 1), static_cast<std::int64_t>(j), found.mean_a[j], found.mean_b[j],
                        found.effect[j], p_uncorrected, p_corrected, again.effect[j], p_held, survives,
                        task && profile[j].best_feature ? Cell{static_cast<std::int64_t>(*profile[j].best_feature)} : Cell{}, align,
                        ab.output_change, ab.readout_a, ab.readout_b, ab.predicted, ab.recomputed, ab.identity_error});
    }
    std::int64_t planted_units = 0;
    for (const auto& u : profile) planted_units += u.best_feature && *u.best_feature == k;
    const auto truth = [&](std::int64_t v) { return task ? Cell{v} : Cell{}; };
    r.add_row({status, nmse, true, static_cast<std::int64_t>(top), naive, significant, survived, truth(winners_planted),
               truth(survived_planted), truth(planted_units), std::isnan(identity_error) ? Cell{} : Cell{identity_error}});
    for (std::size_t j = 0; every_unit && j < m; ++j) {
        const auto rank = std::find(order.begin(), order.end(), j);
        const bool chosen_unit = rank != order.end();
        const auto w = static_cast<std::size_t>(rank - order.begin());
        units.add_row({static_cast<std::int64_t>(j), found.effect[j], again.effect[j],
                       chosen_unit ? Cell{static_cast<std::int64_t>(w + 1)} : Cell{},
                       chosen_unit ? chosen.at(w, "survived") : Cell{},
                       task ? Cell{profile[j].best_feature && *profile[j].best_feature == k} : Cell{}});
    }
    return tables();
}


}  // namespace

std::vector<report::Table> run_with_every_unit(const runner::Run& run) {
    return by_dtype<compute<float, true>, compute<double, true>>(run);
}

namespace {

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
        bool known[std::size(kCounts)];
        std::fill(std::begin(known), std::end(known), true);
        double identity = 0;
        for (std::size_t i : group) {
            const report::Table& r = a.per_run[i].front();
            if (r.at(0, "learned") != Cell{true}) {  // a model that learned nothing has nothing to inspect
                ++not_learned;
                continue;
            }
            ++seeds;
            for (std::size_t c = 0; c < std::size(kCounts); ++c)
                if (const auto x = report::as_number(r.at(0, kCounts[c]))) sums[c] += static_cast<std::int64_t>(*x);
                else known[c] = false;  // a loaded model has no ground truth
            const auto e = report::as_number(r.at(0, "identity_error"));
            identity = e ? max_keeping_nan(identity, *e) : std::nan("");
        }
        auto row = a.swept_cells(group.front());
        row.insert(row.end(), {seeds, not_learned});
        for (std::size_t c = 0; c < std::size(kCounts); ++c) row.push_back(known[c] ? Cell{sums[c]} : Cell{});
        const std::int64_t winners = sums[0], survived = sums[3], survived_planted = sums[5];
        row.push_back(winners > 0 ? Cell{static_cast<double>(survived) / static_cast<double>(winners)} : Cell{});
        row.push_back(seeds > 0 && !std::isnan(identity) ? Cell{identity} : Cell{});
        std::string reading = seeds == 0 ? std::string("no seed's model learned the task: nothing inspected")
                                         : fmt::format("{} of {} discovery winners survive held out", survived, winners);
        if (seeds > 0 && known[5]) reading += fmt::format("; {} of those read the feature most", survived_planted);
        row.push_back(reading);
        t.add_row(std::move(row));
    }
    report::Table runs = a.per_run_rows();
    report::Table chosen = a.concatenated("chosen");
    return {t, std::move(chosen), runs};
}

}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    planted::add_keys(schema);
    schema.add({.path = "groups", .type = KeyType::string, .default_value = "feature", .choices = kGroups,
                .help = "feature: inputs holding `feature` against inputs without it; random: both groups fresh draws from the training distribution (a null); given: inputs_a against inputs_b"});
    schema.add({.path = "inputs_a", .type = KeyType::matrix, .default_value = runner::Json::array(),
                .help = "groups \"given\": group a's inputs, rows of d (at least 4: half for discovery, half held out)"});
    schema.add({.path = "inputs_b", .type = KeyType::matrix, .default_value = runner::Json::array(), .help = "groups \"given\": group b's inputs"});
    schema.add({.path = "readout", .type = KeyType::number_list, .default_value = runner::Json::array(),
                .help = "the readout q (d values) whose change an ablation reports; [] for the planted feature's direction"});
    add_weight_keys(schema);
    add_layer_keys(schema);
    schema.add({.path = "feature", .type = KeyType::integer, .default_value = 0, .min = 0.0, .max = 4095.0,
                .help = "the planted feature whose presence splits the groups, and whose direction is the readout q"});
    schema.add({.path = "group_samples", .type = KeyType::integer, .default_value = 512, .min = 2.0, .max = 1e6,
                .help = "inputs per group in each split (discovery, held out)"});
    schema.add({.path = "top", .type = KeyType::integer, .default_value = 5, .min = 1.0, .max = 16384.0,
                .help = "units chosen on discovery, by |standardised contrast|"});
    schema.add({.path = "permutations", .type = KeyType::integer, .default_value = 999, .min = 1.0, .max = 1e6,
                .help = "relabellings of each permutation test"});
    schema.add({.path = "alpha", .type = KeyType::number, .default_value = 0.05, .min = 0.0, .max = 1.0,
                .help = "significance level of the tests, strictly between 0 and 1"});
    schema.add({.path = "replace", .type = KeyType::string, .default_value = "zero", .choices = kReplacements,
                .help = "an ablated unit's value: 0, or its mean over the training distribution (a loaded model: over the held-out inputs)"});
    return {.name = "unit_contrast",
            .description = "units chosen by contrast on discovery inputs, corrected for the search, confirmed on held-out ones, ablated; on a planted-feature model or one from a weights file",
            .schema = std::move(schema),
            .headlines = {{"survival", {"seeds", "winners", "naive_significant", "significant", "survived", "reading"}}},
            .validate =
                [](const runner::Plan& plan) {
                    for (const runner::Run* r : plan.first_run_of_each_point()) refuse_bad_settings(*r);
                    planted::refuse_bad_tasks(plan, [](const runner::Run& r) { return 4.0 * static_cast<double>(r.integer("group_samples")); });
                },
            .run = by_dtype<compute<float>, compute<double>>,
            .aggregate = aggregate,
            .plot = plot_contrast,
            .validate_plot_choice =
                [](const runner::Plan&, const runner::PlotChoice& choice) {
                    if (choice.width) throw Error("--plot-width: unit_contrast draws no per-width figure; --plot-seed picks the seed");
                },
            // Training, then the three permutation tests over both splits.
            .cost = [](const runner::Run& r) {
                return (r.string("weights").empty() ? planted::training_cost(r) : 0.0) + 4.0 * static_cast<double>(r.integer("permutations") * r.integer("group_samples") * r.integer("m"));
            }};
}

}  // namespace ffn::experiments::unit_contrast
