#include "runner/schema.h"

#include <algorithm>
#include <fmt/format.h>

namespace ffn::runner {

Schema& Schema::add(KeySpec spec) {
    keys_.push_back(std::move(spec));
    return *this;
}

const KeySpec* Schema::find(const std::string& path) const {
    for (const auto& k : keys_)
        if (k.path == path) return &k;
    return nullptr;
}

bool Schema::left_out_of_ids(const std::string& path, const Json& value) const {
    const KeySpec* k = find(path);
    return k && k->id_omits_default && value == k->default_value;
}

bool Schema::is_prefix(const std::string& path) const {
    return std::any_of(keys_.begin(), keys_.end(),
                       [&](const KeySpec& k) { return k.path.rfind(path + ".", 0) == 0; });
}

std::string describe(KeyType t) {
    switch (t) {
        case KeyType::integer: return "an integer";
        case KeyType::number: return "a number";
        case KeyType::string: return "a string";
        case KeyType::boolean: return "true or false";
        case KeyType::int_list: return "a list of integers";
        case KeyType::number_list: return "a list of numbers";
        case KeyType::matrix: return "a matrix (a list of equal-length lists of numbers)";
        case KeyType::object: return "an object";
    }
    return "a value";
}

namespace {

std::string range_text(const KeySpec& s) {
    if (s.min && s.max) return fmt::format(" in [{}, {}]", *s.min, *s.max);
    if (s.min) return fmt::format(" >= {}", *s.min);
    if (s.max) return fmt::format(" <= {}", *s.max);
    return "";
}

}  // namespace

std::string accepted_values(const KeySpec& spec) {
    if (!spec.choices.empty()) {
        std::string list;
        for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
        return "one of " + list;
    }
    return describe(spec.type) + range_text(spec);
}

namespace {

bool in_range(const KeySpec& s, double v) { return (!s.min || v >= *s.min) && (!s.max || v <= *s.max); }

bool all_numbers(const Json& v, bool integers) {
    if (!v.is_array()) return false;
    return std::all_of(v.begin(), v.end(), [&](const Json& e) { return integers ? e.is_number_integer() : e.is_number(); });
}

bool numbers_in_range(const KeySpec& s, const Json& v) {
    return std::all_of(v.begin(), v.end(), [&](const Json& e) { return in_range(s, e.get<double>()); });
}

}  // namespace

std::string type_error(const KeySpec& spec, const Json& value) {
    const std::string expected = "expected " + describe(spec.type) + range_text(spec);
    const std::string got = ", got " + value.dump();
    switch (spec.type) {
        case KeyType::integer:
        case KeyType::number: {
            const bool ok = spec.type == KeyType::integer ? value.is_number_integer() : value.is_number();
            if (!ok || !in_range(spec, value.get<double>())) return expected + got;
            return "";
        }
        case KeyType::string: {
            if (!value.is_string()) return expected + got;
            if (!spec.choices.empty() &&
                std::find(spec.choices.begin(), spec.choices.end(), value.get<std::string>()) == spec.choices.end()) {
                std::string list;
                for (const auto& c : spec.choices) list += (list.empty() ? "" : ", ") + c;
                return "expected one of " + list + got;
            }
            return "";
        }
        case KeyType::boolean: return value.is_boolean() ? "" : expected + got;
        case KeyType::int_list:
        case KeyType::number_list: {
            const bool ok = all_numbers(value, spec.type == KeyType::int_list) && !value.empty();
            return ok && numbers_in_range(spec, value) ? "" : "expected a non-empty " + describe(spec.type).substr(2) + range_text(spec) + got;
        }
        case KeyType::matrix: {
            // Empty only where that is the default (a key that may be left out).
            if (value.is_array() && value.empty() && spec.default_value == Json::array()) return "";
            if (!value.is_array() || value.empty() || !value[0].is_array() || value[0].empty()) return expected + got;
            for (const auto& row : value)
                if (!all_numbers(row, false) || row.size() != value[0].size()) return expected + got;
            return "";
        }
        case KeyType::object: return value.is_object() ? "" : expected + got;
    }
    return expected + got;
}

}  // namespace ffn::runner
