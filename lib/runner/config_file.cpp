// Config files before they are a plan: a file read with its chain of
// bases, and the bundled configs a name finds (the checkout's configs/, or
// those built into the binary).
#include <algorithm>
#include <filesystem>
#include <optional>

#include <fmt/format.h>

#include "core/error.h"
#include "core/names.h"
#include "io/atomic_file.h"
#include "io/bundle.h"
#include "io/json.h"
#include "runner/config.h"

namespace ffn::runner {

Json load_json_file(const std::string& path) { return io::parse_json(io::read_file(path), path); }

namespace {
constexpr int kMaxBaseChain = 16;

// The dotted paths a config sets outside its structural blocks:
// {"lr": 1, "model": {"width": 4}} sets "lr" and "model.width".
void plain_paths(const Json& object, const std::string& prefix, std::vector<std::string>& out) {
    for (const auto& item : object.items()) {
        if (prefix.empty() && std::find(kStructuralKeys.begin(), kStructuralKeys.end(), item.key()) != kStructuralKeys.end()) continue;
        const std::string path = prefix + item.key();
        if (item.value().is_object() && !item.value().empty()) plain_paths(item.value(), path + ".", out);
        else out.push_back(path);
    }
}

// A key a derived config sets (or nulls, back to its default) leaves the
// axis its base sweeps it on, as --set does: the file and the command line
// mean the same by the same key. An axis the derived config writes itself
// stays.
void drop_axes_set_plainly(const Json& derived, Json& merged) {
    if (!derived.is_object()) return;
    std::vector<std::string> set;
    plain_paths(derived, "", set);
    const auto covers = [](const std::string& a, const std::string& b) {  // the same key, or one below the other
        return a == b || (b.size() > a.size() && b.starts_with(a) && b[a.size()] == '.') ||
               (a.size() > b.size() && a.starts_with(b) && a[b.size()] == '.');
    };
    for (const char* block : {"sweep", "zip"}) {
        if (!merged.contains(block) || !merged[block].is_object()) continue;
        const Json own = derived.contains(block) && derived[block].is_object() ? derived[block] : Json::object();
        std::vector<std::string> dropped;
        for (const auto& axis : merged[block].items())
            if (!own.contains(axis.key()) &&
                std::any_of(set.begin(), set.end(), [&](const std::string& p) { return covers(p, axis.key()); }))
                dropped.push_back(axis.key());
        for (const auto& key : dropped) merged[block].erase(key);
        if (merged[block].empty()) merged.erase(block);
    }
}

Json load_config_chain(const std::string& path, std::vector<std::string>& chain, const std::string& bundled) {
    const std::string here = std::filesystem::weakly_canonical(path).string();
    if (std::find(chain.begin(), chain.end(), here) != chain.end())
        throw Error(path + ": key 'base': the chain of bases comes back to this file");
    if (chain.size() >= kMaxBaseChain) throw Error(path + ": key 'base': more than 16 bases in a chain");
    chain.push_back(here);
    Json config = load_json_file(path);
    if (!config.is_object() || !config.contains("base")) return config;
    if (!config["base"].is_string() || config["base"].get<std::string>().empty())
        throw Error(path + ": key 'base': expected the path of another config, relative to this one");
    // Beside this file, then by name among the bundled configs ("width",
    // "smoke/width_small"), so that a copied config still finds its base.
    const std::string base = config["base"].get<std::string>();
    const std::filesystem::path here_dir = std::filesystem::path(path).parent_path();
    std::vector<std::string> tried = {(here_dir / base).lexically_normal().string()};
    if (!base.ends_with(".json")) tried.push_back((here_dir / (base + ".json")).lexically_normal().string());
    std::string base_path;
    for (const auto& candidate : tried) {
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec)) {
            base_path = candidate;
            break;
        }
    }
    if (base_path.empty()) base_path = find_bundled_config(bundled, base, tried).value_or("");
    if (base_path.empty()) {
        std::string list;
        for (const auto& t : tried) list += (list.empty() ? "" : ", ") + t;
        // The names a base may give a bundled config ("smoke/width_small").
        std::vector<std::string> names;
        for (std::size_t i = 0; i < io::bundle::kFileCount; ++i)
            if (const std::string_view file = io::bundle::kFiles[i].path; file.starts_with("configs/") && file.ends_with(".json"))
                names.emplace_back(file.substr(8, file.size() - 8 - 5));
        const auto guess = did_you_mean(base.ends_with(".json") ? base.substr(0, base.size() - 5) : base, names);
        throw Error(path + ": key 'base': no config '" + base + "'" + (guess ? " (did you mean '" + *guess + "'?)" : "") + " (tried " + list +
                    ")");
    }
    Json merged = load_config_chain(base_path, chain, bundled);
    if (!merged.is_object()) throw Error(base_path + ": expected a JSON object at the top level");
    config.erase("base");
    merged.merge_patch(config);
    drop_axes_set_plainly(config, merged);
    return merged;
}
}  // namespace

namespace {
// A config name as a relative path under configs/, with ".json" or not:
// each file name to look for, or none for a name that is absolute or
// climbs out with "..".
std::optional<std::string> find_bundled_config_at(const std::string& bundled, const std::string& name, std::vector<std::string>& tried);

std::vector<std::string> config_file_names(const std::string& name) {
    const std::filesystem::path relative(name);
    if (name.empty() || relative.is_absolute()) return {};
    for (const auto& part : relative)
        if (part == "..") return {};
    return name.ends_with(".json") ? std::vector<std::string>{name} : std::vector<std::string>{name, name + ".json"};
}
}  // namespace

std::optional<std::string> find_bundled_config(const std::string& bundled, const std::string& name, std::vector<std::string>& tried) {
    const auto direct = find_bundled_config_at(bundled, name, tried);
    if (direct || name.empty() || name.find('/') != std::string::npos) return direct;
    // A bare name of a config in a subfolder ("width_small" for
    // smoke/width_small), when only one config has that name.
    const std::string stem = name.ends_with(".json") ? name.substr(0, name.size() - 5) : name;
    std::vector<std::string> matches;
    for (const auto& bundled_name : bundled_config_names(bundled))
        if (std::filesystem::path(bundled_name).filename() == stem) matches.push_back(bundled_name);
    if (matches.size() != 1) return std::nullopt;
    return find_bundled_config_at(bundled, matches.front(), tried);
}

namespace {
std::optional<std::string> find_bundled_config_at(const std::string& bundled, const std::string& name, std::vector<std::string>& tried) {
    for (const std::string& file_name : config_file_names(name)) {
        if (bundled.empty()) {
            const std::string carried = "configs/" + std::filesystem::path(file_name).lexically_normal().generic_string();
            tried.push_back("the built-in " + carried);
            if (io::bundle::find(carried)) return (std::filesystem::path(io::bundle::folder()) / carried).string();
            continue;
        }
        const std::string candidate = (std::filesystem::path(bundled) / file_name).lexically_normal().string();
        tried.push_back(candidate);
        std::error_code ec;
        if (std::filesystem::is_regular_file(candidate, ec)) return candidate;
        // A folder the user may not enter hides its configs: say so, not
        // that there is no such config.
        if (ec == std::errc::permission_denied) throw Error(candidate + ": " + ec.message() + " (a folder on its path cannot be read)");
    }
    return std::nullopt;
}
}  // namespace

std::vector<std::string> bundled_config_names(const std::string& bundled) {
    std::vector<std::string> names;
    if (bundled.empty()) {
        for (std::size_t i = 0; i < io::bundle::kFileCount; ++i) {
            const std::filesystem::path file(io::bundle::kFiles[i].path);
            if (*file.begin() == "configs" && file.extension() == ".json")
                names.push_back(file.lexically_relative("configs").replace_extension().generic_string());
        }
        std::sort(names.begin(), names.end());
        return names;
    }
    std::error_code ec;
    if (!std::filesystem::is_directory(bundled, ec)) return names;
    for (auto it = std::filesystem::recursive_directory_iterator(bundled, ec); !ec && it != std::filesystem::recursive_directory_iterator();
         it.increment(ec))
        if (it->is_regular_file(ec) && it->path().extension() == ".json")
            names.push_back(std::filesystem::relative(it->path(), bundled, ec).replace_extension().generic_string());
    std::sort(names.begin(), names.end());
    return names;
}

Json load_config(const std::string& path, const std::string& bundled) {
    std::vector<std::string> chain;
    return load_config_chain(path, chain, bundled);
}

}  // namespace ffn::runner
