#pragma once
// What every experiment kind takes from its config beyond plain values:
// tensors of a required shape, a model loaded from a weights file or freshly
// initialised, random inputs, the run's dtype as a type, and a memory bound
// checked before the first run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
#include "io/safetensors.h"
#include "nn/init.h"
#include "nn/module.h"
#include "nn/tensor.h"
#include "nn/weights.h"
#include "runner/config.h"
#include "runner/schema.h"

namespace ffn::experiments {

// Calls f.template operator()<T>() with T the run's dtype: one body for
// float32 and float64, e.g. with_dtype(run, [&]<class T>() { return compute<T>(run); }).
template <class F>
auto with_dtype(const runner::Run& run, F&& f) {
    return run.is_float64() ? f.template operator()<double>() : f.template operator()<float>();
}

// A kind's `run` from its compute<T> for float32 and float64, chosen by the
// run's dtype: `.run = by_dtype<compute<float>, compute<double>>`.
template <auto Float32, auto Float64>
std::vector<report::Table> by_dtype(const runner::Run& run) {
    return run.is_float64() ? Float64(run) : Float32(run);
}

// Throws when a configured tensor's shape is not the one the model needs.
inline void require_shape(const std::string& key, std::size_t rows, std::size_t cols, std::size_t want_rows,
                          std::size_t want_cols, const std::string& why) {
    if (rows != want_rows || cols != want_cols)
        throw Error(fmt::format("key '{}': expected a {}x{} matrix ({}), got {}x{}", key, want_rows, want_cols, why,
                                rows, cols));
}

inline void require_length(const std::string& key, std::size_t length, std::size_t want, const std::string& why) {
    if (length != want)
        throw Error(fmt::format("key '{}': expected {} values ({}), got {}", key, want, why, length));
}

// ---------------------------------------------------------------------------
// Models from the config: a fresh initialisation, or weights trained
// elsewhere (e.g. in PyTorch) read from a safetensors file.

// The keys every analysis kind takes for that.
inline void add_weight_keys(runner::Schema& schema) {
    schema.add({"weights", runner::KeyType::string, "", {}, {}, {}, "a safetensors model to analyse as it is, neither initialised nor trained (ffn-lab's own files and PyTorch nn.Sequential's load as they are)"});
    schema.add({"names", runner::KeyType::object, runner::Json::object(), {}, {}, {},
                "parameter name -> tensor name in the weights file, for other names ({\"up.weight\": \"fc1.weight\"})"});
}

// A PyTorch nn.Sequential(Linear, act, Linear)'s tensor names, tried for a
// parameter the file does not hold under ffn-lab's own name.
inline const std::map<std::string, std::string>& torch_sequential_names() {
    static const std::map<std::string, std::string> names = {
        {"up.weight", "0.weight"}, {"up.bias", "0.bias"}, {"down.weight", "2.weight"}, {"down.bias", "2.bias"}};
    return names;
}

// The config's "names": parameter name -> tensor name.
inline std::map<std::string, std::string> weight_names(const runner::Run& run) {
    std::map<std::string, std::string> names;
    for (const auto& item : run.raw("names").items()) {
        if (!item.value().is_string()) throw Error("key 'names': '" + item.key() + "' must map to a string");
        names[item.key()] = item.value().get<std::string>();
    }
    return names;
}

// What a weights file of ffn-lab's own or of an nn.Sequential(Linear, act,
// Linear) says about the model it holds, from its header alone: the input
// and hidden widths (the first layer's weight, m x d), and the activation
// when ffn-lab wrote the file (its run's values are in the metadata).
// Nothing when the file holds no such weight: the loader then says what
// is wrong.
struct WeightsFacts {
    std::size_t in = 0, hidden = 0;
    std::optional<std::string> activation;
};
inline std::optional<WeightsFacts> weights_facts(const std::string& weights, const runner::Json& names) {
    const io::SafetensorsHeader header = io::read_safetensors_header(weights);
    std::string up = "up.weight";
    if (names.is_object() && names.contains(up) && names[up].is_string()) up = names[up].get<std::string>();
    else if (!header.find(up)) up = torch_sequential_names().at(up);
    const io::TensorEntry* e = header.find(up);
    if (!e || e->shape.size() != 2) return std::nullopt;
    WeightsFacts facts{static_cast<std::size_t>(e->shape[1]), static_cast<std::size_t>(e->shape[0]), std::nullopt};
    if (const auto run = header.metadata.find("ffn_lab_run"); run != header.metadata.end()) {
        try {
            const auto values = runner::Json::parse(run->second);
            if (values.is_object() && values.contains("activation") && values["activation"].is_string())
                facts.activation = values["activation"].get<std::string>();
        } catch (const runner::Json::exception&) {
            // Metadata that is not a run's: the file says nothing of its activation.
        }
    }
    return facts;
}

// A kind's keys_from_files: the keys `fixed` (key, the file's value) that
// the config leaves unset take the file's value; one it sets to another
// value, or sweeps over another value, is refused, naming both and how to
// leave it to the file.
inline void take_file_keys(runner::GridPoint& point, const std::set<std::string>& given, const std::string& source,
                           const std::string& what, const std::vector<std::pair<std::string, runner::Json>>& fixed) {
    std::vector<std::string> swept, clashing, ours, tildes;
    for (const auto& entry : fixed) {
        const std::string& key = entry.first;  // a named copy: lambdas may not capture a structured binding before C++20's clang 16
        const runner::Json& value = entry.second;
        const bool is_swept = std::any_of(point.swept.begin(), point.swept.end(), [&](const auto& s) { return s.first == key; });
        if (is_swept && point.values[key] != value) {
            swept.push_back(fmt::format("'{}' ({} here)", key, point.values[key].is_string() ? point.values[key].get<std::string>()
                                                                                             : point.values[key].dump()));
        } else if (!given.contains(key)) {
            point.values[key] = value;
            continue;
        } else if (point.values[key] != value) {
            clashing.push_back("'" + key + "'");
            ours.push_back(point.values[key].is_string() ? point.values[key].get<std::string>() : point.values[key].dump());
        } else {
            continue;
        }
        tildes.push_back("--set ~" + key);
    }
    if (swept.empty() && clashing.empty()) return;
    std::string config_says;
    if (!swept.empty()) config_says = fmt::format("sweeps {}", fmt::join(swept, ", "));
    if (!clashing.empty())
        config_says += fmt::format("{}sets {} to {}", swept.empty() ? "" : " and ", fmt::join(clashing, ", "), fmt::join(ours, ", "));
    throw Error(fmt::format("the config {}, but {} is one model ({}): leave {} to the file ({}{})", config_says, source, what,
                            swept.size() + clashing.size() == 1 ? "it" : "them", fmt::join(tildes, " "),
                            swept.empty() ? "" : "; --set ~zip or ~sweep drops a whole block"));
}

// take_file_keys for a weights file of ffn-lab's own or an nn.Sequential's:
// its `sizes`, and the activation its run recorded. A file that records
// none (PyTorch's) needs the config to name one: a swept activation is
// refused, and so is none at all, rather than running the net under the
// key's default, which may not be the one it was trained with.
inline void take_weights_file_keys(runner::GridPoint& point, const std::set<std::string>& given, const std::string& weights,
                                   const WeightsFacts& facts, std::vector<std::pair<std::string, runner::Json>> sizes,
                                   const std::string& what) {
    if (facts.activation) sizes.emplace_back("activation", *facts.activation);
    take_file_keys(point, given, weights, what + (facts.activation ? ", " + *facts.activation : ""), sizes);
    if (facts.activation) return;
    if (std::any_of(point.swept.begin(), point.swept.end(), [](const auto& s) { return s.first == "activation"; }))
        throw Error(fmt::format("the config sweeps 'activation', but {} is one trained model and does not record its activation: set the "
                                "one it was trained with (--set activation=relu)",
                                weights));
    if (!given.contains("activation"))
        throw Error(fmt::format("{} does not record its activation, and the config names none: set the one it was trained with "
                                "(--set activation=gelu, say)",
                                weights));
}

// Loads run.weights into the model when given; else initialises it with
// `scheme` from a stream that depends only on the seed and `what` (so that
// changing an unrelated key keeps the same weights).
template <class T>
void load_or_initialize(const runner::Run& run, nn::Module<T>& model, const std::string& scheme, const std::string& what) {
    if (!run.string("weights").empty()) return nn::load_weights(run.string("weights"), model, weight_names(run), torch_sequential_names());
    Rng rng = Rng::stream(run.seed, fnv1a64(what), "init");
    nn::initialize(model, {nn::parse_init_scheme(scheme)}, rng);
}

// tokens x d inputs ~ N(0, 1) from the run's data stream.
template <class T>
nn::Matrix<T> normal_inputs(const runner::Run& run, std::size_t tokens, std::size_t d, const std::string& what) {
    Rng rng = Rng::stream(run.seed, fnv1a64(what), "data");
    nn::Matrix<T> X = nn::Matrix<T>::from_shape({tokens, d});
    for (auto& x : X) x = static_cast<T>(rng.normal());
    return X;
}

// What one run may ask for: a quarter of a small machine's memory, since a
// sweep runs one run per thread. Checked before the first run starts, so a
// size the machine cannot hold is refused at once, not after an hour or by
// the kernel's OOM killer.
constexpr double kMaxRunBytes = 4.0 * (1 << 30);

// Refuses the plan when `bytes` estimates more than kMaxRunBytes for one of
// its runs; the message names `keys` with the run's values and the estimate.
inline void refuse_runs_beyond_memory(const runner::Plan& plan, const std::vector<std::string>& keys,
                                      const std::function<double(const runner::Run&)>& bytes) {
    for (const runner::Run* run : plan.first_run_of_each_point()) {
        const runner::Run& r = *run;
        const double need = bytes(r);
        if (need <= kMaxRunBytes) continue;
        std::vector<std::string> names, values;
        for (const auto& k : keys) {
            names.push_back("'" + k + "'");
            values.push_back(std::to_string(r.integer(k)));
        }
        throw Error(fmt::format("keys {} ({}): a run needs about {:.1f} GiB, more than the {:.0f} GiB one run may take",
                                fmt::join(names, ", "), fmt::join(values, ", "), need / (1 << 30), kMaxRunBytes / (1 << 30)));
    }
}

// The claims list's promise for identities that hold up to rounding is a
// magnitude, not the elementwise report::within rule: the max-abs difference
// over the max-abs output, below 1e-12 in float64 and 1e-5 in float32.
inline double identity_tolerance(bool float64) { return float64 ? 1e-12 : 1e-5; }

}  // namespace ffn::experiments
