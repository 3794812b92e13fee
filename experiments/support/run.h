#pragma once
// What every experiment kind takes from its config beyond plain values:
// tensors of a required shape, a model loaded from a weights file or freshly
// initialised, random inputs, the run's dtype as a type, and a memory bound
// checked before the first run.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/hash.h"
#include "core/rng.h"
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
    schema.add({"weights", runner::KeyType::string, "", {}, {}, {}, "a safetensors model to use instead of a fresh init (ffn-lab's own files and PyTorch nn.Sequential's load as they are)"});
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
    for (const auto& r : plan.runs) {
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
