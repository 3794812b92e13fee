#include "runner/config.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <cctype>
#include <fmt/format.h>
#include <optional>
#include <set>

#include "core/error.h"
#include "core/hash.h"
#include "core/memory.h"
#include "io/atomic_file.h"
#include "io/bundle.h"
#include "io/json.h"
#include "report/table_io.h"
#include "report/text.h"
#include "runner/experiment.h"

namespace ffn::runner {

namespace {

void reject_unknown_keys(const Json& obj, const std::vector<std::string>& allowed, const std::string& where) {
    for (const auto& item : obj.items())
        if (std::find(allowed.begin(), allowed.end(), item.key()) == allowed.end()) {
            std::string msg = where + ": unknown key '" + item.key() + "'";
            if (auto guess = did_you_mean(item.key(), allowed)) msg += " (did you mean '" + *guess + "'?)";
            throw Error(msg);
        }
}

// {"range": [a, b]}, or "a:b" as Python slices write it (--set seeds=0:100)
// -> [a, a+1, ..., b-1] (half-open, as Python's range); anything else is
// returned unchanged for the schema to judge.
Json expand_seed_range(const Json& seeds_in, const std::string& where) {
    Json seeds = seeds_in;
    if (seeds.is_string()) {
        const std::string text = seeds.get<std::string>();
        const auto colon = text.find(':');
        const auto digits = [](const std::string& t) { return !t.empty() && t.size() <= 9 && t.find_first_not_of("0123456789") == std::string::npos; };
        // 0,1,2 as Hydra's users write a list on the command line.
        if (colon == std::string::npos && text.find(',') != std::string::npos) {
            Json list = Json::array();
            for (std::size_t start = 0; start <= text.size();) {
                const std::size_t end = std::min(text.find(',', start), text.size());
                const std::string part = text.substr(start, end - start);
                if (!digits(part))
                    throw Error(where + ": '" + part + "' in the list " + text + " is not a seed (an integer from 0)");
                list.push_back(std::stoull(part));
                start = end + 1;
            }
            return list;
        }
        if (colon == std::string::npos || !digits(text.substr(0, colon)) || !digits(text.substr(colon + 1)))
            throw Error(where + ": expected a list of seeds, {\"range\": [first, end]} or first:end, got \"" + text + "\"");
        seeds = Json{{"range", {std::stoull(text.substr(0, colon)), std::stoull(text.substr(colon + 1))}}};
    }
    if (!seeds.is_object()) return seeds;
    reject_unknown_keys(seeds, {"range"}, where);
    const Json& r = seeds.value("range", Json());
    if (!r.is_array() || r.size() != 2 || !r[0].is_number_unsigned() || !r[1].is_number_unsigned() ||
        r[0].get<std::uint64_t>() >= r[1].get<std::uint64_t>() || r[1].get<std::uint64_t>() - r[0].get<std::uint64_t>() > 1000000)
        throw Error(where + ": expected {\"range\": [first, end]} with 0 <= first < end (end excluded, at most 10^6 seeds), got " +
                    seeds.dump());
    Json out = Json::array();
    for (std::uint64_t s = r[0].get<std::uint64_t>(); s < r[1].get<std::uint64_t>(); ++s) out.push_back(s);
    return out;
}

Schema with_common_keys(const ExperimentKind& kind) {
    Schema s = kind.schema;
    if (!s.find("seeds"))
        s.add({"seeds", KeyType::int_list, Json::array({0}), 0.0, std::nullopt, {},
               kind.random ? "random seeds, one run each" : "unused: this kind draws nothing at random (one seed at most)"});
    if (!s.find("dtype"))
        s.add({"dtype", KeyType::string, "float64", std::nullopt, std::nullopt, {"float32", "float64"}, "scalar type"});
    return s;
}

}  // namespace

report::Table key_table(const ExperimentKind& kind) {
    report::Table t("keys");
    t.add_column("key", report::ColumnType::text)
        .add_column("accepts", report::ColumnType::text)
        .add_column("default", report::ColumnType::text)
        .add_column("help", report::ColumnType::text);
    const Schema schema = with_common_keys(kind);
    for (const auto& k : schema.keys())
        t.add_row({"`" + k.path + "`", report::Cell(accepted_values(k)),
                   report::Cell(k.default_value.is_null() ? std::string("required") : "`" + k.default_value.dump() + "`"),
                   report::Cell(k.help)});
    return t;
}

namespace {

std::vector<std::string> known_paths(const Schema& s, bool top_level) {
    std::vector<std::string> out;
    for (const auto& k : s.keys()) out.push_back(k.path);
    if (top_level) out.insert(out.end(), kStructuralKeys.begin(), kStructuralKeys.end());
    return out;
}

[[noreturn]] void unknown_key(const std::string& where, const std::string& path, const Schema& s,
                              const std::string& kind) {
    std::string msg = where + ": key '" + path + "': unknown key for experiment '" + kind + "'";
    if (auto guess = did_you_mean(path, known_paths(s, true))) msg += " (did you mean '" + *guess + "'?)";
    throw Error(msg);
}

void check_value(const std::string& where, const KeySpec& spec, const Json& value) {
    const std::string problem = type_error(spec, value);
    if (!problem.empty()) throw Error(where + ": key '" + spec.path + "': " + problem);
}

// Walks nested objects down to schema keys, filling `flat`.
void flatten(const Json& obj, const std::string& prefix, const Schema& s, const std::string& where,
             const std::string& kind, Json& flat) {
    for (const auto& item : obj.items()) {
        const std::string path = prefix.empty() ? item.key() : prefix + "." + item.key();
        if (prefix.empty() &&
            std::find(kStructuralKeys.begin(), kStructuralKeys.end(), path) != kStructuralKeys.end())
            continue;
        if (const KeySpec* spec = s.find(path)) {
            check_value(where, *spec, item.value());
            if (flat.contains(path))
                throw Error(where + ": key '" + path + "' is given twice (nested and dotted); keep one");
            flat[path] = item.value();
        } else if (item.value().is_object() && s.is_prefix(path)) {
            flatten(item.value(), path, s, where, kind, flat);
        } else {
            unknown_key(where, path, s, kind);
        }
    }
}

// One grid axis: each step assigns values to one or more keys.
struct Axis {
    std::vector<std::string> keys;
    std::vector<std::vector<Json>> steps;  // steps[i][k] is keys[k]'s value
};

Axis read_list_axis(const std::string& where, const std::string& block, const std::string& key, const Json& list,
                    const Schema& s, const std::string& kind) {
    const KeySpec* spec = s.find(key);
    if (!spec) unknown_key(where + ": " + block, key, s, kind);
    if (key == "seeds") throw Error(where + ": " + block + ": sweep seeds with the top-level 'seeds' list");
    if (!list.is_array() || list.empty())
        throw Error(where + ": " + block + " key '" + key + "': expected a non-empty list of values, got " + list.dump());
    Axis axis{{key}, {}};
    for (const auto& v : list) {
        check_value(where + ": " + block, *spec, v);
        axis.steps.push_back({v});
    }
    return axis;
}

std::vector<std::pair<std::string, report::Cell>> read_cells(const Json& obj, const std::string& where) {
    if (!obj.is_object()) throw Error(where + ": expected an object of column: value pairs, got " + obj.dump());
    std::vector<std::pair<std::string, report::Cell>> out;
    for (const auto& item : obj.items()) {
        if (item.value().is_structured()) throw Error(where + " '" + item.key() + "': expected a number, string or boolean");
        out.emplace_back(item.key(), report::cell_of(item.value()));
    }
    return out;
}

double read_tolerance(const Json& obj, const std::string& key, double fallback, const std::string& where) {
    if (!obj.contains(key)) return fallback;
    const Json& v = obj[key];
    if (!v.is_number() || v.get<double>() < 0)
        throw Error(where + " '" + key + "': expected a number >= 0, got " + v.dump());
    return v.get<double>();
}

std::vector<report::Expectation> read_expectations(const Json& list, const std::string& where) {
    if (!list.is_array()) throw Error(where + ": key 'expect': expected a list of objects");
    std::vector<report::Expectation> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string here = where + ": expect[" + std::to_string(i) + "]";
        const Json& e = list[i];
        if (!e.is_object()) throw Error(here + ": expected an object");
        reject_unknown_keys(e, {"table", "where", "values", "given", "atol", "rtol", "source", "note"}, here);
        if (!e.contains("table") || !e["table"].is_string()) throw Error(here + ": key 'table': expected a string");
        if (!e.contains("values")) throw Error(here + ": key 'values': required");
        report::Expectation x;
        x.table = e["table"].get<std::string>();
        if (e.contains("where")) x.where = read_cells(e["where"], here + " where");
        x.values = read_cells(e["values"], here + " values");
        if (x.values.empty()) throw Error(here + ": key 'values': expected at least one column");
        x.atol = read_tolerance(e, "atol", 0.0, here);
        x.rtol = read_tolerance(e, "rtol", 0.0, here);
        if (e.contains("source")) {
            if (!e["source"].is_string()) throw Error(here + ": key 'source': expected a string");
            x.source = e["source"].get<std::string>();
        }
        x.origin = here;
        out.push_back(std::move(x));
    }
    return out;
}

// steps=1e3: a whole number written with an exponent in --set is that
// integer, as a user of Hydra types it (a config file stays strict).
Json whole_number_as_typed(Json value, const std::string& text) {
    if (value.is_number_float() && text.find_first_of("eE") != std::string::npos) {
        const double v = value.get<double>();
        if (std::nearbyint(v) == v && std::fabs(v) < 9007199254740992.0) value = static_cast<std::int64_t>(v);
    }
    return value;
}

// Hydra's multirun shorthand: a comma-separated value of a scalar key
// sweeps it. Strings split only when every part is one of the key's
// choices, so an expression such as max(x,0) stays one value.
std::optional<Json> multirun_values(const Override& o, const KeySpec& spec) {
    if (!o.value.is_string() || o.path == "seeds") return std::nullopt;
    const std::string text = o.value.get<std::string>();
    if (text.find(',') == std::string::npos) return std::nullopt;
    const bool scalar = spec.type == KeyType::integer || spec.type == KeyType::number || spec.type == KeyType::boolean;
    if (!scalar && !(spec.type == KeyType::string && !spec.choices.empty())) return std::nullopt;
    Json values = Json::array();
    for (std::size_t begin = 0;;) {
        const std::size_t comma = text.find(',', begin);
        const std::string part = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
        if (spec.type == KeyType::string) {
            if (std::find(spec.choices.begin(), spec.choices.end(), part) == spec.choices.end()) return std::nullopt;
            values.push_back(part);
        } else {
            try {
                values.push_back(whole_number_as_typed(io::parse_json(part, "--set " + o.path), part));
            } catch (const Error&) {
                throw Error("--set " + o.path + ": '" + part + "' in the list " + text + " is not " + describe(spec.type));
            }
        }
        if (comma == std::string::npos) break;
        begin = comma + 1;
    }
    return values;
}

}  // namespace

Override parse_override(const std::string& text) {
    // Hydra's ~key: the key back to its default, as null does.
    if (text.size() > 1 && text[0] == '~' && text.find('=') == std::string::npos) return {text.substr(1), nullptr, text};
    const auto eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw Error("--set '" + text + "': expected key.path=value");
    Override o{text.substr(0, eq), nullptr, text};
    const std::string value = text.substr(eq + 1);
    // JSON when it parses as JSON (by the same rules as a config), else the
    // text itself as a string.
    try {
        o.value = whole_number_as_typed(io::parse_json(value, "--set " + o.path), value);
    } catch (const Error&) {
        o.value = value;
        try {
            (void)o.value.dump();
        } catch (const Json::exception&) {
            throw Error("--set " + o.path + ": the value is not valid UTF-8 text");
        }
    }
    return o;
}

namespace {
// --set 'model={"width": 4}' as --set model.width=4, as a config file may
// write a key nested or dotted: an object given for a path that is no key
// but a prefix of keys is the keys below it.
void expand_nested(const Override& o, const Schema& schema, std::vector<Override>& out) {
    if (!o.value.is_object() || o.value.empty() || schema.find(o.path) || o.path == "sweep" || o.path == "zip" ||
        o.path.starts_with("sweep.") || o.path.starts_with("zip.")) {
        out.push_back(o);
        return;
    }
    for (const auto& item : o.value.items()) {
        const std::string path = o.path + "." + item.key();
        expand_nested({path, item.value(), path + "=" + item.value().dump()}, schema, out);
    }
}
}  // namespace

namespace {

// The kind a config names, or a refusal with the nearest name.
const ExperimentKind& find_kind(const Json& root, const std::string& source, const std::vector<ExperimentKind>& kinds) {
    if (!root.contains("experiment") || !root["experiment"].is_string())
        throw Error(source + ": key 'experiment': required, a string naming the experiment kind (see `ffn-lab list`)");
    const std::string kind_name = root["experiment"].get<std::string>();
    std::vector<std::string> names;
    for (const auto& k : kinds) {
        if (k.name == kind_name) return k;
        names.push_back(k.name);
    }
    std::string msg = source + ": key 'experiment': unknown experiment kind '" + kind_name + "'";
    if (auto guess = did_you_mean(kind_name, names)) msg += " (did you mean '" + *guess + "'?)";
    throw Error(msg + "; `ffn-lab list` shows the kinds");
}

// The --set overrides, onto the config's flat keys and its sweep and zip
// blocks. A --set on a swept or zipped key fixes it to that one value: the
// key leaves its axis (the rest of a zip still walks together).
void apply_overrides(const std::vector<Override>& overrides, const Schema& schema, const std::string& kind_name, Json& root,
                     Json& flat) {
    for (const auto& o : overrides) {
        const std::string where = "--set " + o.path;
        if (const auto dot = o.path.find('.'); dot != std::string::npos &&
                                               (o.path.substr(0, dot) == "sweep" || o.path.substr(0, dot) == "zip")) {
            const std::string block = o.path.substr(0, dot);
            if (root.contains(block) && !root[block].is_object())
                throw Error(where + ": the config's '" + block + "' is not an object");
            root[block][o.path.substr(dot + 1)] = o.value;
            continue;
        }
        if (o.path == "experiment" || o.path == "expect" || o.path == "check" || o.path == "description" ||
            o.path == "protocol")
            throw Error(where + ": '" + o.path + "' cannot be overridden");
        if (o.value.is_null() && (o.path == "sweep" || o.path == "zip")) {  // ~sweep: no axes of that block
            root.erase(o.path);
            continue;
        }
        if (o.path == "sweep" || o.path == "zip")
            throw Error(where + ": set one axis at a time, --set " + o.path + ".KEY=[values] (or drop them all, --set ~" + o.path + ")");
        if (o.value.is_null()) {  // ~key or key=null: the default, off any axis
            if (!schema.find(o.path) && !schema.is_prefix(o.path)) unknown_key("--set", o.path, schema, kind_name);
            const auto below = [&](const std::string& key) {
                return key == o.path || (key.size() > o.path.size() && key.starts_with(o.path) && key[o.path.size()] == '.');
            };
            for (Json* object : {&flat, root.contains("sweep") && root["sweep"].is_object() ? &root["sweep"] : nullptr,
                                 root.contains("zip") && root["zip"].is_object() ? &root["zip"] : nullptr}) {
                if (!object) continue;
                std::vector<std::string> keys;
                for (const auto& item : object->items())
                    if (below(item.key())) keys.push_back(item.key());
                for (const auto& key : keys) object->erase(key);
            }
            for (const char* block : {"sweep", "zip"})
                if (root.contains(block) && root[block].is_object() && root[block].empty()) root.erase(block);
            continue;
        }
        const KeySpec* spec = schema.find(o.path);
        if (!spec) unknown_key("--set", o.path, schema, kind_name);
        if (const auto values = multirun_values(o, *spec)) {  // --set lr=1e-3,1e-2 is --set sweep.lr=[1e-3,1e-2]
            root["sweep"][o.path] = *values;
            continue;
        }
        Json value = o.path == "seeds" ? expand_seed_range(o.value, where) : o.value;
        // A string key takes the text as typed: --set target=1 is "1".
        if (spec->type == KeyType::string && !value.is_string()) value = o.text.substr(o.text.find('=') + 1);
        check_value(where, *spec, value);
        flat[o.path] = value;
        for (const char* block : {"sweep", "zip"})
            if (root.contains(block) && root[block].is_object() && root[block].contains(o.path)) {
                root[block].erase(o.path);
                if (root[block].empty()) root.erase(block);
            }
    }
}

bool block_holds(const Json& root, const char* block, const std::string& key) {
    return root.contains(block) && root[block].is_object() && root[block].contains(key);
}

// Every key's value: the config's, else the schema's default; a key with
// neither is required unless an axis gives it.
Json resolve_keys(const Json& flat, const Json& root, const Schema& schema, const std::string& source) {
    Json resolved = Json::object();
    for (const auto& k : schema.keys()) {
        if (flat.contains(k.path)) resolved[k.path] = flat[k.path];
        else if (!k.default_value.is_null()) resolved[k.path] = k.default_value;
        else if (!block_holds(root, "sweep", k.path) && !block_holds(root, "zip", k.path))
            throw Error(source + ": key '" + k.path + "': required, " + describe(k.type) +
                        (k.help.empty() ? "" : " (" + k.help + ")"));
    }
    return resolved;
}

// A value (or a zip's tuple) twice on one axis would run the same runs
// twice, under one run id, and give a table two rows of one key.
void refuse_repeated_steps(const Axis& axis, const std::string& where) {
    std::set<std::string> seen;
    for (const auto& step : axis.steps) {
        std::string text;
        for (std::size_t k = 0; k < step.size(); ++k) text += (k ? ", " : "") + step[k].dump();
        if (!seen.insert(text).second)
            throw Error(fmt::format("{}: the list repeats {}{}{}", where, step.size() > 1 ? "(" : "", text, step.size() > 1 ? ")" : ""));
    }
}

// The grid's axes: the zip block's keys as one axis that walks together,
// then an axis per swept key.
std::vector<Axis> read_axes(const Json& root, const Schema& schema, const std::string& source, const std::string& kind_name) {
    std::vector<Axis> axes;
    if (root.contains("zip")) {
        const Json& zip = root["zip"];
        if (!zip.is_object() || zip.empty()) throw Error(source + ": key 'zip': expected an object of key: [values]");
        Axis axis;
        std::size_t length = 0;
        for (const auto& item : zip.items()) {
            Axis one = read_list_axis(source, "zip", item.key(), item.value(), schema, kind_name);
            if (!axis.keys.empty() && one.steps.size() != length)
                throw Error(fmt::format("{}: zip key '{}': has {} values, '{}' has {} (zip lists must have equal length)",
                                        source, item.key(), one.steps.size(), axis.keys.front(), length));
            length = one.steps.size();
            axis.keys.push_back(item.key());
            axis.steps.resize(length);
            for (std::size_t i = 0; i < length; ++i) axis.steps[i].push_back(one.steps[i][0]);
        }
        refuse_repeated_steps(axis, fmt::format("{}: zip ({})", source, fmt::join(axis.keys, ", ")));
        axes.push_back(std::move(axis));
    }
    if (root.contains("sweep")) {
        const Json& sweep = root["sweep"];
        if (!sweep.is_object()) throw Error(source + ": key 'sweep': expected an object of key: [values]");
        for (const auto& item : sweep.items()) {
            if (block_holds(root, "zip", item.key()))
                throw Error(source + ": key '" + item.key() + "' is in both 'sweep' and 'zip'");
            axes.push_back(read_list_axis(source, "sweep", item.key(), item.value(), schema, kind_name));
            refuse_repeated_steps(axes.back(), source + ": sweep key '" + item.key() + "'");
        }
    }
    return axes;
}

// The plan's seeds, and which keys its rows are named by.
void read_seeds(Plan& plan, const Json& resolved, const std::vector<Axis>& axes) {
    plan.seeds = resolved["seeds"].get<std::vector<std::uint64_t>>();
    if (std::set<std::uint64_t>(plan.seeds.begin(), plan.seeds.end()).size() != plan.seeds.size())
        throw Error(plan.source + ": key 'seeds': the list repeats a seed");
    if (!plan.kind->random && plan.seeds.size() > 1)
        throw Error(plan.source + ": key 'seeds': " + plan.kind->name +
                    " draws nothing at random, so every seed would repeat one run; give one seed at most");
    for (const auto& a : axes) plan.swept_keys.insert(plan.swept_keys.end(), a.keys.begin(), a.keys.end());
    if (plan.seeds.size() > 1) plan.swept_keys.push_back("seed");
}

// The grid's points and runs: the Cartesian product of the axes, first axis
// slowest, seeds innermost; refused before it is built when it would not fit.
void expand_grid(Plan& plan, const Json& resolved, const std::vector<Axis>& axes, const std::set<std::string>& given) {
    // The seed list is not a run's value (copying it into every run was
    // quadratic).
    Json per_run = resolved;
    per_run.erase("seeds");
    // Each point of the grid holds its values as a JSON tree, about eight
    // times their text, and each run a few words.
    double point_count = 1;
    for (const auto& a : axes) point_count *= static_cast<double>(a.steps.size());
    const double run_count = point_count * static_cast<double>(plan.seeds.size());
    if (run_count > 1e9) throw Error(fmt::format("{}: {:.0f} runs: more than the 10^9 one sweep may plan", plan.source, run_count));
    const double plan_bytes = point_count * (8.0 * static_cast<double>(per_run.dump().size()) + 1024.0) +
                              run_count * static_cast<double>(sizeof(Run));
    if (const double available = static_cast<double>(memory_available()); plan_bytes > 0.5 * available)
        throw Error(fmt::format("{}: {:.0f} runs: their plan alone needs about {:.2f} GiB, more than half of the {:.2f} GiB "
                                "this machine (or its memory limit) leaves; sweep fewer runs at once",
                                plan.source, run_count, plan_bytes / 1073741824.0, available / 1073741824.0));
    plan.runs.reserve(static_cast<std::size_t>(run_count));
    // Untouched yet: 10^7 runs' records then take a page fault per 2 MB,
    // not per 4 KB (a quarter of such a plan's time).
    prefer_huge_pages(plan.runs.data(), plan.runs.capacity() * sizeof(Run));
    std::vector<std::size_t> counter(axes.size(), 0);
    for (;;) {
        auto point = std::make_shared<GridPoint>();
        point->index = plan.points.size();
        point->values = per_run;
        for (std::size_t a = 0; a < axes.size(); ++a)
            for (std::size_t k = 0; k < axes[a].keys.size(); ++k) {
                point->values[axes[a].keys[k]] = axes[a].steps[counter[a]][k];
                point->swept.emplace_back(axes[a].keys[k], axes[a].steps[counter[a]][k]);
            }
        if (plan.kind->keys_from_files) {
            const Json before = point->values;
            try {
                plan.kind->keys_from_files(*point, given);
            } catch (const Error& e) {
                throw Error(plan.source + ": " + e.what(), e.code());
            }
            // What a file gave obeys the key's rules as a config's value does
            // (a weights file with no hidden units is no width-0 net).
            for (const auto& item : point->values.items())
                if (const KeySpec* spec = plan.kind->schema.find(item.key()); spec && before.value(item.key(), Json()) != item.value())
                    check_value(fmt::format("{}: {} gives", plan.source, point->values.value("weights", std::string("a file"))), *spec,
                                item.value());
        }
        set_id_parts(*point, plan.kind->name, plan.kind->schema);
        plan.points.push_back(point);
        for (std::uint64_t seed : plan.seeds) {
            Run run;
            run.index = plan.runs.size();
            run.seed = seed;
            run.point = point;
            run.seed_swept = plan.seeds.size() > 1;
            run.id = run_id(*point, seed);
            plan.runs.push_back(std::move(run));
        }
        std::size_t a = axes.size();
        while (a > 0 && ++counter[a - 1] == axes[a - 1].steps.size()) counter[--a] = 0;
        if (a == 0) break;
    }
    for (const auto& key : plan.swept_keys)
        if (std::any_of(plan.points.begin(), plan.points.end(), [&](const auto& p) {
                return p->values.contains(key) && p->values[key].is_number_float();
            }))
            plan.real_swept_keys.push_back(key);
}

// The config as run: the file's keys after every override, flat, with the
// seed list spelled out; running it again gives the same plan.
void record_config(Plan& plan, const Json& root, const Json& flat, const std::vector<Override>& given_overrides) {
    plan.config = Json::object();
    for (const char* key : {"experiment", "description"})
        if (root.contains(key)) plan.config[key] = root[key];
    for (const auto& item : flat.items())
        if (item.key() != "seeds") plan.config[item.key()] = item.value();
    plan.config["seeds"] = plan.seeds;
    for (const auto& o : given_overrides) plan.overrides.push_back(o.text);
    for (const char* key : {"sweep", "zip", "protocol", "expect", "check"})
        if (root.contains(key)) plan.config[key] = root[key];
}

// The blocks that judge the tables: the protocol the document's values
// hold for (and where this plan departs from it), the expectations, and
// check's tolerance.
void read_judging_blocks(Plan& plan, const Json& root, const Schema& schema) {
    const std::string& source = plan.source;
    // Whether every run holds `value` for `key`, validated against the schema.
    auto all_runs_hold = [&](const std::string& key, const Json& given, const std::string& where) {
        if (key == "seeds") {
            const Json want = expand_seed_range(given, where + " 'seeds'");
            check_value(where, *schema.find("seeds"), want);
            return want.get<std::vector<std::uint64_t>>() == plan.seeds;
        }
        const KeySpec* spec = schema.find(key);
        if (!spec) unknown_key(where, key, schema, plan.kind->name);
        check_value(where, *spec, given);
        return std::all_of(plan.points.begin(), plan.points.end(), [&](const auto& p) { return p->values.value(key, Json()) == given; });
    };
    if (root.contains("protocol")) {
        const Json& protocol = root["protocol"];
        if (!protocol.is_object()) throw Error(source + ": key 'protocol': expected an object of key: value");
        for (const auto& item : protocol.items()) {
            if (!all_runs_hold(item.key(), item.value(), source + ": protocol")) plan.protocol_deviations.push_back(item.key());
            plan.protocol[item.key()] =
                item.key() == "seeds" ? expand_seed_range(item.value(), source + ": protocol 'seeds'") : item.value();
        }
    }
    if (root.contains("expect")) {
        plan.expectations = read_expectations(root["expect"], source);
        // Whether an expectation applies to the rows it selects is decided
        // row by row when the tables are joined (a multirun's rows under the
        // document's settings keep their verdict); its 'given' holds or not
        // for the whole plan.
        for (std::size_t i = 0; i < plan.expectations.size(); ++i) {
            report::Expectation& e = plan.expectations[i];
            const Json& raw = root["expect"][i];
            if (!raw.contains("given")) continue;
            if (!raw["given"].is_object()) throw Error(e.origin + ": key 'given': expected an object of key: value");
            for (const auto& item : raw["given"].items())
                if (!all_runs_hold(item.key(), item.value(), e.origin + ": given")) e.applies = false;
        }
    }
    if (root.contains("check")) {
        const Json& c = root["check"];
        if (!c.is_object()) throw Error(source + ": key 'check': expected an object {\"rtol\": R, \"atol\": A, \"long\": B}");
        reject_unknown_keys(c, {"rtol", "atol", "long"}, source + ": check");
        plan.check_tolerance.rtol = read_tolerance(c, "rtol", plan.check_tolerance.rtol, source + ": check");
        plan.check_tolerance.atol = read_tolerance(c, "atol", plan.check_tolerance.atol, source + ": check");
        if (c.contains("long")) {
            if (!c["long"].is_boolean()) throw Error(source + ": check: key 'long': expected true or false, got " + c["long"].dump());
            plan.check_long = c["long"].get<bool>();
        }
    }
}

}  // namespace

Plan make_plan(const Json& root_in, const std::string& source_path, const std::vector<Override>& given_overrides,
               const std::vector<ExperimentKind>& kinds) {
    const std::string source = io::bundle::shown(source_path);
    if (!root_in.is_object()) throw Error(source + ": expected a JSON object at the top level");
    Json root = root_in;
    Plan plan;
    plan.kind = &find_kind(root, source, kinds);
    plan.source = source;
    const Schema schema = with_common_keys(*plan.kind);
    if (root.contains("description")) {
        if (!root["description"].is_string()) throw Error(source + ": key 'description': expected a string");
        plan.description = root["description"].get<std::string>();
    }
    if (root.contains("seeds")) root["seeds"] = expand_seed_range(root["seeds"], source + ": key 'seeds'");
    Json flat = Json::object();
    flatten(root, "", schema, source, plan.kind->name, flat);
    std::vector<Override> overrides;
    for (const auto& o : given_overrides) expand_nested(o, schema, overrides);
    apply_overrides(overrides, schema, plan.kind->name, root, flat);

    try {
        const Json resolved = resolve_keys(flat, root, schema, source);
        const std::vector<Axis> axes = read_axes(root, schema, source, plan.kind->name);
        read_seeds(plan, resolved, axes);
        std::set<std::string> given;  // what the config sets, for keys_from_files
        for (const auto& item : flat.items()) given.insert(item.key());
        for (const auto& axis : axes) given.insert(axis.keys.begin(), axis.keys.end());
        expand_grid(plan, resolved, axes, given);
        record_config(plan, root, flat, given_overrides);
        read_judging_blocks(plan, root, schema);
        if (plan.kind->validate) {
            try {
                plan.kind->validate(plan);
            } catch (const Error& e) {
                throw Error(source + ": " + e.what(), e.code());
            }
        }
    } catch (const Error& e) {
        // The messages name the config file; a value the command line gave
        // is named as given, so that nobody looks for it in the file.
        for (auto o = given_overrides.rbegin(); o != given_overrides.rend(); ++o) {
            std::string key = o->path;
            for (const char* block : {"sweep.", "zip."})
                if (key.starts_with(block)) key = key.substr(std::string(block).size());
            if (std::string(e.what()).find("key '" + key + "'") != std::string::npos)
                throw Error(std::string(e.what()) + " (from --set " + report::printable(o->text) + ")", e.code());
        }
        throw;
    }
    return plan;
}

}  // namespace ffn::runner
