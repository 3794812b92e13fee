// layer_lab: document 003's lab on one MLP layer as it is, a Hugging Face
// checkpoint's (claim S8) or a fresh one, on the inputs that feed it. Per
// run: how the units fire on these inputs (each unit's share of positive
// pre-activations, the gate's for a gated layer); an intervention along a
// direction of the hidden space, given or the one whose write reaches
// furthest along an output direction, projected out or set, with the
// readout's change recomputed beside the change the down projection
// predicts; and the collapse view, how much of the layer's output on these
// inputs the best affine map of them explains. The layer is data: nothing
// is trained.
#include <algorithm>
#include <cmath>

#include "analysis/affine_fit.h"
#include "analysis/units.h"
#include "core/stats.h"
#include "experiments/support/ffn.h"
#include "experiments/support/real_layer.h"
#include "runner/experiment.h"

namespace ffn::experiments::layer_lab {

namespace {

using report::Cell;
using report::ColumnType;

const FfnKeys kKeys{.d = 64, .m = 256, .tokens = 1024, .min_tokens = 2, .activation = "gelu",
                    .activation_help = "the activation of a fresh layer (a checkpoint's layer brings its own)"};
const std::vector<std::string> kSpaces = {"output", "hidden"};
const std::vector<std::string> kEdits = {"project_out", "set"};

// The vector a run reads from the config key, else from the inputs file's
// tensor of the same name; empty when neither holds one.
std::vector<double> vector_of(const runner::Run& run, const std::string& key, std::size_t length) {
    if (!run.numbers(key).empty()) return run.numbers(key);
    return run.string("inputs").empty() ? std::vector<double>{} : file_vector(run.string("inputs"), key, length);
}

template <class T>
std::vector<report::Table> compute(const runner::Run& run) {
    // The layer, and the inputs that feed it.
    std::optional<nn::LoadedLayer<T>> loaded;
    std::optional<Ffn<T>> fresh;
    std::string source;
    nn::Matrix<T> X;
    if (const auto found = checkpoint_layer(run)) {
        loaded = nn::load_layer<T>(found->checkpoint, found->spec);
        source = found->spec.source;
    } else {
        fresh = make_ffn<T>(run, kKeys);
        source = run.string("weights").empty() ? "a fresh layer (" + run.string("init") + " init)" : run.string("weights");
    }
    const std::size_t d = loaded ? loaded->spec.d : fresh->d, m = loaded ? loaded->spec.hidden : fresh->m;
    if (!run.string("inputs").empty()) X = input_rows<T>(run, d);
    else if (fresh) X = fresh->inputs;
    else X = normal_inputs<T>(run, static_cast<std::size_t>(run.integer("tokens")), d, fmt::format("d={}", d));
    const std::size_t rows = X.shape()[0];
    nn::Matrix<T> Z = loaded ? loaded->pre_activation(X) : nn::apply(fresh->mlp.layers[0], X);
    nn::Matrix<T> H = loaded ? loaded->hidden(X) : Z;
    if (!loaded) nn::activate_inplace(fresh->mlp.activation, std::span<T>(H.data(), H.size()));
    const nn::Linear<T>& down = loaded ? loaded->down() : fresh->mlp.layers[1];
    const nn::Matrix<T> Y = nn::apply(down, H);

    // Firing: each unit's share of positive pre-activations.
    std::vector<double> share(m, 0.0);
    std::size_t positive = 0;
    for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t j = 0; j < m; ++j) {
            const bool on = Z.data()[r * m + j] > T(0);
            share[j] += on;
            positive += on;
        }
    for (double& s : share) s /= static_cast<double>(rows);
    const auto never = std::count(share.begin(), share.end(), 0.0), always = std::count(share.begin(), share.end(), 1.0);

    // The intervention: along the given direction, or the hidden direction
    // whose write reaches furthest along the output direction (the readout
    // itself when none is given).
    const std::vector<double> q = vector_of(run, "readout", d);
    const bool output_space = run.string("space") == "output";
    std::vector<double> direction = vector_of(run, "direction", output_space ? d : m);
    if (direction.empty() && output_space) direction = q;
    const std::vector<double> u = output_space ? analysis::hidden_direction_of(down, direction) : direction;
    const std::optional<double> set_to = run.string("edit") == "set" ? std::optional<double>(run.number("value")) : std::nullopt;

    report::Table layer("layer");
    layer.add_column("source", ColumnType::text)
        .add_column("d", ColumnType::integer)
        .add_column("hidden", ColumnType::integer)
        .add_column("activation", ColumnType::text)
        .add_column("gated", ColumnType::boolean)
        .add_column("inputs", ColumnType::integer)
        .add_column("positive", ColumnType::real, 4)
        .add_column("unit_share_q25", ColumnType::real, 4)
        .add_column("unit_share_median", ColumnType::real, 4)
        .add_column("unit_share_q75", ColumnType::real, 4)
        .add_column("units_never", ColumnType::integer)
        .add_column("units_always", ColumnType::integer)
        .add_column("affine_relative_rms", ColumnType::real, 3);
    // The collapse view: the best affine map of the inputs, fitted on them
    // (n/a with fewer than 2(d + 1) inputs, where it would fit by having
    // nearly as many coefficients as data).
    Cell affine;
    if (rows >= 2 * (d + 1)) {
        const auto fit = analysis::fit_rows(X, Y);
        affine = std::sqrt(analysis::residual_sum_of_squares(fit.solve(), X, Y) / fit.total_sum_of_squares());
    }
    const auto quantile = [&](double p) { return percentile(share, p); };
    layer.add_row({source, static_cast<std::int64_t>(d), static_cast<std::int64_t>(m),
                   std::string(nn::to_string(loaded ? loaded->spec.activation : fresh->mlp.activation)), loaded && loaded->spec.gated,
                   static_cast<std::int64_t>(rows), static_cast<double>(positive) / static_cast<double>(rows * m), quantile(25),
                   quantile(50), quantile(75), static_cast<std::int64_t>(never), static_cast<std::int64_t>(always), affine});

    report::Table units("units");
    units.add_column("unit", ColumnType::integer).add_column("positive", ColumnType::real, 4).add_key("unit");
    for (std::size_t j = 0; j < m; ++j) units.add_row({static_cast<std::int64_t>(j), share[j]});

    report::Table edit("intervention");
    edit.add_column("space", ColumnType::text)
        .add_column("edit", ColumnType::text)
        .add_column("value", ColumnType::real, 4)
        .add_column("coefficient_mean", ColumnType::real, 4)
        .add_column("output_change_rms", ColumnType::real, 4)
        .add_column("readout_predicted", ColumnType::real, 4)
        .add_column("readout_recomputed", ColumnType::real, 4)
        .add_column("identity_error", ColumnType::real, 3);
    if (u.empty()) {
        edit.add_row({run.string("space"), run.string("edit"), set_to ? Cell{*set_to} : Cell{}, Cell{}, Cell{}, Cell{}, Cell{}, Cell{}});
    } else {
        double norm = 0, coefficient = 0;
        for (double x : u) norm += x * x;
        norm = std::sqrt(norm);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t j = 0; j < m; ++j) coefficient += static_cast<double>(H.data()[r * m + j]) * u[j] / norm;
        const analysis::AblationEffect e = analysis::edit_direction(H, Y, down, u, set_to, q);
        double change = 0, predicted = 0, recomputed = 0, gap = 0;
        for (double x : e.output_change) change += x * x;
        for (std::size_t r = 0; r < rows; ++r) {
            predicted += e.readout_predicted[r];
            recomputed += e.readout_recomputed[r];
            const double g = std::abs(e.readout_predicted[r] - e.readout_recomputed[r]);
            gap = std::isnan(g) || std::isnan(gap) ? std::nan("") : std::max(gap, g);
        }
        const double n = static_cast<double>(rows);
        edit.add_row({run.string("space"), run.string("edit"), set_to ? Cell{*set_to} : Cell{}, coefficient / n, std::sqrt(change / n),
                      predicted / n, recomputed / n, std::isnan(gap) ? Cell{} : Cell{gap}});
    }
    return {layer, edit, units};
}


// The runs' tables joined, the per-unit one held back from the terminal
// (a checkpoint's layer has thousands of units; --table units prints it).
std::vector<report::Table> aggregate(runner::Aggregation& a) {
    std::vector<report::Table> tables = a.concatenate_runs();
    for (auto& t : tables)
        if (t.name() == "units") t.set_long_form();
    return tables;
}

// The readout and the direction, against the layer's sizes, before any run.
void refuse_bad_settings(const runner::Run& r) {
    const auto found = checkpoint_layer(r);
    const auto d = found ? found->spec.d : static_cast<std::size_t>(r.integer("d"));
    const auto m = found ? found->spec.hidden : static_cast<std::size_t>(r.integer("m"));
    if (!r.string("inputs").empty() && input_row_count(r.string("inputs"), d) < 2)
        throw Error(fmt::format("{}: fewer than 2 inputs", r.string("inputs")));
    const bool output_space = r.string("space") == "output";
    const std::size_t q = vector_of(r, "readout", d).size(), u = vector_of(r, "direction", output_space ? d : m).size();
    if (q != d)
        throw Error(fmt::format("key 'readout': {} values, but the layer writes d = {} (give q in the config or as tensor 'readout' of the inputs file)",
                                q, d));
    if (u == 0 && !output_space)
        throw Error(fmt::format("key 'direction': space \"hidden\" needs a direction of m = {} values (in the config or as tensor 'direction' of the inputs file)", m));
    if (u != 0 && u != (output_space ? d : m))
        throw Error(fmt::format("key 'direction': {} values, but the {} space has {}", u, r.string("space"), output_space ? d : m));
    // A zero vector has no direction: the edit and the readout change would
    // be empty cells, not a finding.
    for (const char* key : {"readout", "direction"}) {
        const auto v = vector_of(r, key, std::string(key) == "readout" || output_space ? d : m);
        if (!v.empty() && std::all_of(v.begin(), v.end(), [](double x) { return x == 0; }))
            throw Error(fmt::format("key '{}': every value is 0{}, which gives no direction", key,
                                    r.numbers(key).empty() ? fmt::format(" (tensor '{}' of {})", key, r.string("inputs")) : ""));
    }
    if (r.string("edit") != "set" && r.number("value") != 0)
        throw Error("key 'value': a value is set only with edit \"set\" (project_out sets the coefficient to 0)");
}

}  // namespace

runner::ExperimentKind make() {
    using runner::KeyType;
    runner::Schema schema;
    add_ffn_keys(schema, {.d = kKeys.d, .m = kKeys.m, .tokens = kKeys.tokens, .min_tokens = kKeys.min_tokens, .activation = kKeys.activation,
                          .activation_help = kKeys.activation_help, .init_key = true});
    add_layer_keys(schema);
    schema.add({.path = "readout", .type = KeyType::number_list, .default_value = runner::Json::array(),
                .help = "the readout q (d values) whose change the intervention reports; [] for the inputs file's tensor 'readout'"});
    schema.add({.path = "direction", .type = KeyType::number_list, .default_value = runner::Json::array(),
                .help = "the direction edited: d values in the output space, m in the hidden; [] for the inputs file's tensor 'direction', else (output space) the readout"});
    schema.add({.path = "space", .type = KeyType::string, .default_value = "output", .choices = kSpaces,
                .help = "output: edit the hidden direction W_down^T r that writes most along r; hidden: edit the direction as given"});
    schema.add({.path = "edit", .type = KeyType::string, .default_value = "project_out", .choices = kEdits,
                .help = "project_out: the direction's coefficient set to 0 on every input; set: to `value`"});
    schema.add({.path = "value", .type = KeyType::number, .default_value = 0.0, .help = "the coefficient that edit \"set\" gives every input"});
    return {.name = "layer_lab",
            .description = "one MLP layer as it is (a checkpoint's, or fresh) on its inputs: how its units fire, an intervention along a direction with the readout change predicted and recomputed, the best affine fit",
            .schema = std::move(schema),
            .headlines = {{"layer", {"positive", "unit_share_median", "units_never", "affine_relative_rms", "activation", "d", "hidden", "inputs", "source"}},
                          {"intervention", {"space", "edit", "coefficient_mean", "readout_predicted", "readout_recomputed", "identity_error"}}},
            // A file's d, m and activation (and an inputs file's row count)
            // are the run's, as in firing_fraction.
            .keys_from_files = layer_keys_from_files,
            .validate =
                [](const runner::Plan& plan) {
                    refuse_ffn_beyond_memory(plan);
                    for (const runner::Run* r : plan.first_run_of_each_point()) refuse_bad_settings(*r);
                    refuse_seeds_of_a_given_layer(plan);
                },
            .run = by_dtype<compute<float>, compute<double>>,
            .aggregate = aggregate};
}

}  // namespace ffn::experiments::layer_lab
