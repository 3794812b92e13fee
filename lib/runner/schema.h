#pragma once
// What keys an experiment kind accepts: dotted paths with a type, a range or
// choices, and a default (none: the key is required). A config is checked
// against its kind's schema before anything runs.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/names.h"

namespace ffn::runner {

using Json = nlohmann::ordered_json;

enum class KeyType {
    integer,
    number,
    string,
    boolean,
    int_list,     // [1, 2, 3]
    number_list,  // [0.5, -1]
    matrix,       // [[1, 0], [0, 1]]: rectangular, numbers
    object,       // free-form JSON object (e.g. a name mapping)
};

struct KeySpec {
    std::string path;
    KeyType type = KeyType::number;
    Json default_value = nullptr;  // null: required
    std::optional<double> min, max;
    std::vector<std::string> choices;  // strings only
    std::string help;
    // A key added after run ids were first handed out: at its default it is
    // left out of the run id, so that the runs that do not use it keep
    // their ids, their cached results and their expected tables.
    bool id_omits_default = false;
};

class Schema {
public:
    Schema() = default;
    Schema(std::initializer_list<KeySpec> keys) : keys_(keys) {}

    Schema& add(KeySpec spec);
    const KeySpec* find(const std::string& path) const;
    // Whether key `path` at `value` stays out of run ids and of the names
    // that key a run's random streams (KeySpec::id_omits_default).
    bool left_out_of_ids(const std::string& path, const Json& value) const;
    const std::vector<KeySpec>& keys() const { return keys_; }
    // True when some key lies below `path` (e.g. "model" for "model.width").
    bool is_prefix(const std::string& path) const;

private:
    std::vector<KeySpec> keys_;
};

std::string describe(KeyType t);

// What a key takes, as a reader needs it: "an integer in [1, 8192]",
// "one of relu, gelu".
std::string accepted_values(const KeySpec& spec);

// Empty when `value` fits `spec`; else what was expected, e.g.
// "expected an integer >= 1, got \"four\"".
std::string type_error(const KeySpec& spec, const Json& value);

using ffn::did_you_mean;  // core/names.h

}  // namespace ffn::runner
