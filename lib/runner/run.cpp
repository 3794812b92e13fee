// A plan's runs and points once made: their ids, their values as the kind
// reads them, and whether they follow the document's protocol.
#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "core/hash.h"
#include "runner/config.h"
#include "runner/experiment.h"

namespace ffn::runner {

bool Plan::follows_protocol(const std::vector<std::string>& ignoring) const {
    return std::all_of(protocol_deviations.begin(), protocol_deviations.end(), [&](const std::string& key) {
        return std::find(ignoring.begin(), ignoring.end(), key) != ignoring.end();
    });
}

std::vector<std::string> Plan::protocol_deviations_of(const GridPoint& point, const std::vector<std::string>& ignoring) const {
    std::vector<std::string> out;
    for (const auto& item : protocol.items()) {
        if (std::find(ignoring.begin(), ignoring.end(), item.key()) != ignoring.end()) continue;
        if (item.key() == "seeds" ? item.value().get<std::vector<std::uint64_t>>() != seeds
                                  : point.values.value(item.key(), Json()) != item.value())
            out.push_back(item.key());
    }
    return out;
}

bool Plan::follows_protocol(const Run& run, const std::vector<std::string>& ignoring) const {
    return protocol_deviations_of(*run.point, ignoring).empty();
}

bool Plan::follows_protocol(const GridPoint& point, const std::vector<std::string>& ignoring) const {
    return protocol_deviations_of(point, ignoring).empty();
}

std::vector<const Run*> Plan::first_run_of_each_point() const {
    std::vector<const Run*> out;
    out.reserve(points.size());
    for (const Run& run : runs)
        if (out.empty() || out.back()->point != run.point) out.push_back(&run);
    return out;
}

bool Plan::swept_real(const std::string& key) const {
    return std::find(real_swept_keys.begin(), real_swept_keys.end(), key) != real_swept_keys.end();
}

void set_id_parts(GridPoint& point, const std::string& kind, const Schema& schema) {
    // Run::values() (less the keys left out) is the point's values with "seed" added last (an
    // ordered_json keeps insertion order): its dump is the point's without
    // the closing brace, the seed, and the brace.
    Json hashed = point.values;
    for (const auto& k : schema.keys())
        if (hashed.contains(k.path) && schema.left_out_of_ids(k.path, hashed[k.path])) hashed.erase(k.path);
    std::string text = hashed.dump();
    text.pop_back();
    point.id_prefix = fnv1a64(kind + "\n" + text + (hashed.empty() ? "" : ",") + "\"seed\":");
    point.id_suffix = "}";
}

std::uint64_t run_id(const GridPoint& point, std::uint64_t seed) {
    return fnv1a64(point.id_suffix, fnv1a64(std::to_string(seed), point.id_prefix));
}

Json Run::values() const {
    Json v = point->values;
    v["seed"] = seed;
    return v;
}

std::vector<std::pair<std::string, Json>> Run::swept() const {
    auto out = point->swept;
    if (seed_swept) out.emplace_back("seed", seed);
    return out;
}

std::string run_id_hex(std::uint64_t id) { return fmt::format("{:016x}", id); }

std::string Run::id_hex() const { return run_id_hex(id); }

std::string Run::label() const {
    std::string out;
    for (const auto& [key, value] : swept()) {
        std::string text = value.is_string() ? value.get<std::string>() : value.dump();
        // Only characters that are safe in a file name on every system.
        for (char& c : text)
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '+') c = '_';
        out += (out.empty() ? "" : "_") + key + "=" + text;
    }
    return seed_swept ? out : out + (out.empty() ? "" : "_") + "seed=" + std::to_string(seed);
}

const Json& Run::raw(const std::string& path) const {
    const auto found = point->values.find(path);
    if (found == point->values.end()) throw std::logic_error("run has no key '" + path + "' (missing from the schema?)");
    return *found;
}
std::int64_t Run::integer(const std::string& path) const { return raw(path).get<std::int64_t>(); }
double Run::number(const std::string& path) const { return raw(path).get<double>(); }
std::string Run::string(const std::string& path) const { return raw(path).get<std::string>(); }
bool Run::boolean(const std::string& path) const { return raw(path).get<bool>(); }
std::vector<double> Run::numbers(const std::string& path) const { return raw(path).get<std::vector<double>>(); }
std::vector<std::int64_t> Run::integers(const std::string& path) const {
    return raw(path).get<std::vector<std::int64_t>>();
}
std::vector<std::vector<double>> Run::matrix(const std::string& path) const {
    return raw(path).get<std::vector<std::vector<double>>>();
}

}  // namespace ffn::runner
