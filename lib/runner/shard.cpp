#include "runner/shard.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <numeric>

#include "core/error.h"
#include "core/hash.h"
#include "io/atomic_file.h"
#include "runner/experiment.h"
#include "runner/run_cache.h"

namespace ffn::runner {

Shard parse_shard(const std::string& text) {
    const auto slash = text.find('/');
    const auto number = [&](std::string_view s, std::size_t& out) {
        const auto* end = s.data() + s.size();
        const auto [p, ec] = std::from_chars(s.data(), end, out);
        return !s.empty() && ec == std::errc() && p == end;
    };
    Shard s;
    if (slash == std::string::npos || !number(std::string_view(text).substr(0, slash), s.index) ||
        !number(std::string_view(text).substr(slash + 1), s.count) || s.count == 0 || s.count > 100000 || s.index == 0 ||
        s.index > s.count)
        throw Error("--shard '" + text + "': expected I/N with 1 <= I <= N <= 100000, e.g. 2/8");
    return s;
}

std::vector<std::size_t> shard_runs(const Plan& plan, Shard shard) {
    // Whole work units: a batch split in two would cost two batches.
    const std::vector<std::vector<std::size_t>> items = work_units(plan, std::vector<bool>(plan.runs.size(), true));
    std::vector<double> cost(items.size(), 0.0);
    for (std::size_t k = 0; k < items.size(); ++k)
        for (const std::size_t i : items[k]) cost[k] += plan.kind->cost ? plan.kind->cost(plan.runs[i]) : 1.0;
    std::vector<std::size_t> order(items.size());
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
    std::vector<double> load(shard.count, 0.0);
    std::vector<std::size_t> mine;
    for (const std::size_t k : order) {
        const auto least = static_cast<std::size_t>(std::min_element(load.begin(), load.end()) - load.begin());
        load[least] += cost[k];
        if (least + 1 == shard.index) mine.insert(mine.end(), items[k].begin(), items[k].end());
    }
    std::sort(mine.begin(), mine.end());
    return mine;
}

std::string plan_fingerprint(const Plan& plan) {
    return fmt::format("{:016x}", fnv1a64(fmt::format("{}\n{}\n{}", build_identity(), plan.kind->name, plan.config.dump())));
}

ShardRecord read_shard_record(const std::string& dir) {
    const std::string file = (std::filesystem::path(dir) / "shard.json").string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(std::filesystem::symlink_status(file, ec)))
        throw Error(dir + ": no shard.json (not a folder `ffn-lab sweep --shard I/N --out DIR` wrote)");
    const Json doc = load_json_file(file);
    const auto field = [&](const char* key) -> const Json& {
        if (!doc.is_object() || !doc.contains(key)) throw Error(file + ": no '" + key + "' (not a shard ffn-lab wrote)");
        return doc[key];
    };
    if (field("format") != kResultFormat)
        throw Error(file + ": written with result format " + field("format").dump() + ", this ffn-lab writes " +
                    std::to_string(kResultFormat) + "; run the shard again");
    const Json &shard = field("shard"), &of = field("of"), &runs = field("runs");
    if (!field("fingerprint").is_string() || !field("config_file").is_string() || !shard.is_number_unsigned() ||
        !of.is_number_unsigned() || !field("config").is_object() || !runs.is_array() || of == 0 ||
        of.get<std::uint64_t>() > 100000 || shard == 0 || shard.get<std::uint64_t>() > of.get<std::uint64_t>())
        throw Error(file + ": a field of the wrong type or out of range (not a shard ffn-lab wrote)");
    ShardRecord record;
    record.shard = {shard.get<std::size_t>(), of.get<std::size_t>()};
    record.config_file = doc["config_file"].get<std::string>();
    record.fingerprint = doc["fingerprint"].get<std::string>();
    record.config = doc["config"];
    if (doc.contains("overrides") && doc["overrides"].is_array())
        for (const auto& o : doc["overrides"])
            if (o.is_string()) record.overrides.push_back(o.get<std::string>());
    for (const auto& id : runs) {
        if (!id.is_string()) throw Error(file + ": 'runs' holds " + id.dump() + ", not a run id (not a shard ffn-lab wrote)");
        record.runs.push_back(id.get<std::string>());
    }
    return record;
}

void write_shard_record(const std::string& dir, const Plan& plan, Shard shard, const std::vector<std::size_t>& runs,
                        const Json& record) {
    // The shard's own keys first, then what runner/manifest records of any
    // run (the config, the build, the counts); "runs" is the part's run ids.
    Json doc;
    doc["format"] = kResultFormat;
    doc["fingerprint"] = plan_fingerprint(plan);
    doc["shard"] = shard.index;
    doc["of"] = shard.count;
    for (const auto& [key, value] : record.items()) doc[key] = value;
    doc["runs"] = Json::array();
    for (const std::size_t r : runs) doc["runs"].push_back(plan.runs[r].id_hex());
    io::write_file_atomically((std::filesystem::path(dir) / "shard.json").string(), doc.dump(2) + "\n");
}

Plan plan_from_shards(const std::vector<std::string>& dirs, const std::vector<ExperimentKind>& kinds,
                      std::vector<std::string>& caches) {
    std::vector<std::pair<std::string, ShardRecord>> parts;
    for (const auto& dir : dirs) parts.emplace_back(dir, read_shard_record(dir));
    const auto& [first_dir, first] = parts.front();
    const std::size_t n = first.shard.count;
    std::vector<const std::pair<std::string, ShardRecord>*> by_index(n + 1, nullptr);
    for (const auto& part : parts) {
        const auto& [dir, p] = part;
        if (p.fingerprint != first.fingerprint) {
            const auto sets = [](const ShardRecord& r) {
                return r.overrides.empty() ? std::string("no --set") : fmt::format("--set {}", fmt::join(r.overrides, " --set "));
            };
            const std::string why = first.config_file != p.config_file ? fmt::format("{} and {}", first.config_file, p.config_file)
                                    : first.overrides != p.overrides
                                        ? fmt::format("{} with {}, and with {}", first.config_file, sets(first), sets(p))
                                        : fmt::format("{} as it read then and later: the file changed", first.config_file);
            throw Error(fmt::format("{} and {}: shards of different sweeps ({})", first_dir, dir, why));
        }
        if (p.shard.count != n)
            throw Error(fmt::format("{}: shard {}/{}, but {} is one of {}", dir, p.shard.index, p.shard.count, first_dir, n));
        if (by_index[p.shard.index])
            throw Error(fmt::format("{} and {}: both are shard {}/{}", by_index[p.shard.index]->first, dir, p.shard.index, n));
        by_index[p.shard.index] = &part;
    }
    std::vector<std::string> missing;
    for (std::size_t i = 1; i <= n; ++i)
        if (!by_index[i]) missing.push_back(fmt::format("{}/{}", i, n));
    if (!missing.empty()) throw Error(fmt::format("merge: shard {} missing (give every shard's folder)", fmt::join(missing, ", ")));
    Plan plan = make_plan(first.config, first.config_file, {}, kinds);
    plan.overrides = first.overrides;  // in the config already; the manifest says how they were given
    if (plan_fingerprint(plan) != first.fingerprint)
        throw Error(first_dir + ": its config no longer makes the plan it ran (another ffn-lab version?); run the shards again");
    for (std::size_t i = 1; i <= n; ++i) {
        std::vector<std::string> ids;
        for (const std::size_t r : shard_runs(plan, {i, n})) ids.push_back(plan.runs[r].id_hex());
        if (by_index[i]->second.runs != ids)
            throw Error(fmt::format("{}: its runs are not shard {}/{} of this sweep", by_index[i]->first, i, n));
        caches.push_back((std::filesystem::path(by_index[i]->first) / "runs").string());
    }
    return plan;
}

std::vector<std::string> shard_folders_in(const std::string& dir) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) throw Error("--shards-in " + dir + ": no such folder");
    std::vector<std::string> found;
    for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
        if (entry.is_directory() && !entry.path().filename().string().starts_with(".")) found.push_back(entry.path().string());
    if (ec) throw Error("--shards-in " + dir + ": cannot list it (" + ec.message() + ")");
    // 2 before 10: by length, then by name.
    std::sort(found.begin(), found.end(),
              [](const std::string& a, const std::string& b) { return a.size() != b.size() ? a.size() < b.size() : a < b; });
    if (found.empty()) throw Error("--shards-in " + dir + ": no shard folders in it");
    return found;
}

}  // namespace ffn::runner
