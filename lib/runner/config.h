#pragma once
// From a JSON config file (plus --set overrides) to a validated plan: the grid
// of runs to execute, the document's expectations, and the check tolerance.
//
// A config holds "experiment" (the kind), "description", the kind's keys
// (nested objects or dotted names), and optionally:
//   "sweep":  {"model.width": [2, 4, 8]}    cartesian product, last key fastest
//   "zip":    {"d": [512, 768], "m": [2048, 3072]}   paired lists, one axis
//   "seeds":  [0, 1, 2] or {"range": [0, 100]} (half-open)   innermost axis
//   "dtype":  "float32" | "float64"
//   "protocol": {"target": "sin(3*x)", "seeds": {"range": [0, 100]}, ...}
//             the keys and values under which the document's numbers hold:
//             a run that differs in any is not judged against them
//   "expect": [{"table", "where", "values", "given", "atol", "rtol", "source"}]
//   "check":  {"rtol": 1e-9, "atol": 1e-12}  tolerance of `ffn-lab check`
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/diff.h"
#include "report/expect.h"
#include "runner/schema.h"

namespace ffn::runner {

// Keys every config may hold besides its kind's schema.
inline const std::vector<std::string> kStructuralKeys = {"experiment", "description", "sweep", "zip", "expect", "check", "protocol"};

struct ExperimentKind;

struct Override {
    std::string path;
    Json value;
    std::string text;  // as the user typed it, for the manifest
};

// "model.width=8" -> {model.width, 8}. The value is JSON when it parses as
// JSON, else a string ("activation=relu"). Throws ffn::Error on a missing '='.
Override parse_override(const std::string& text);

// One point of the grid: the resolved value of every schema key but the
// seed (flat, dotted paths) and the swept values that distinguish it, in
// grid order. Its runs, one per seed, share it: a plan of a million seeds
// holds a handful of these, not a million copies.
struct GridPoint {
    std::size_t index = 0;  // in Plan::points
    Json values = Json::object();
    std::vector<std::pair<std::string, Json>> swept;
    // The run id's hash over the kind and the values' text up to the
    // seed, and the text after it: a run's id costs its seed's digits, not
    // a serialisation (Run::id).
    std::uint64_t id_prefix = 0;
    std::string id_suffix;
};

// The two parts of a run's id that its point fixes (GridPoint::id_prefix,
// id_suffix), for `kind`; and the id of the point's run with `seed`.
void set_id_parts(GridPoint& point, const std::string& kind, const Schema& schema);
std::uint64_t run_id(const GridPoint& point, std::uint64_t seed);

// A run id as the tables and files show it: 16 hex digits.
std::string run_id_hex(std::uint64_t id);

// One run: a point of the grid and a seed.
class Run {
public:
    std::size_t index = 0;
    std::uint64_t seed = 0;
    // fnv1a64(kind + "\n" + values().dump()): a hash of the resolved values
    // and the seed, computed from the point's prefix.
    std::uint64_t id = 0;
    std::shared_ptr<const GridPoint> point;
    bool seed_swept = false;  // the plan runs several seeds: the seed names a run too
    std::string artifacts;    // folder for files a run writes; empty: none

    // Every resolved value with the seed: what identifies the run.
    Json values() const;
    // The swept values, in grid order, then ("seed", seed) when seeds vary.
    std::vector<std::pair<std::string, Json>> swept() const;
    std::string id_hex() const;
    // The swept values and the seed as a file-name-safe label:
    // "model.width=16_seed=3".
    std::string label() const;
    const Json& raw(const std::string& path) const;
    std::int64_t integer(const std::string& path) const;
    double number(const std::string& path) const;
    std::string string(const std::string& path) const;
    bool boolean(const std::string& path) const;
    std::vector<double> numbers(const std::string& path) const;
    std::vector<std::int64_t> integers(const std::string& path) const;
    std::vector<std::vector<double>> matrix(const std::string& path) const;
    bool is_float64() const { return string("dtype") == "float64"; }
};

struct Plan {
    const ExperimentKind* kind = nullptr;
    std::string source;  // the config file's path
    std::string description;
    Json config;         // the config as run: the file's keys after every override
    std::vector<std::string> overrides;  // the --set texts, as given
    std::vector<std::shared_ptr<const GridPoint>> points;  // in grid order
    std::vector<Run> runs;  // in grid order, seeds innermost
    std::vector<std::string> swept_keys;  // in grid order; "seed" when seeds vary
    std::vector<std::uint64_t> seeds;
    std::vector<report::Expectation> expectations;
    report::Tolerance check_tolerance{1e-9, 1e-12};
    // check.long: the config's check trains for more than a few seconds;
    // `check --quick` (the sanitizer pass, the check of every kernel
    // family) leaves it out.
    bool check_long = false;
    // The config's "protocol" block, validated, key -> value ("seeds"
    // expanded to its list): the settings the document's numbers hold for.
    Json protocol = Json::object();
    // The config's "protocol" keys on which some run differs from the
    // document ("seeds" when the seed list is not the protocol's).
    std::vector<std::string> protocol_deviations;
    // True when the document's protocol holds for every run, except perhaps
    // for the keys listed in `ignoring`.
    bool follows_protocol(const std::vector<std::string>& ignoring = {}) const;
    // The same for one run: its own resolved values, and the plan's seed
    // list (a multirun's rows are judged each by its own values).
    bool follows_protocol(const Run& run, const std::vector<std::string>& ignoring = {}) const;
    // Whether a swept key takes a non-integral number anywhere in the grid
    // (its column is then real throughout).
    bool swept_real(const std::string& key) const;
    std::vector<std::string> real_swept_keys;
    bool follows_protocol(const GridPoint& point, const std::vector<std::string>& ignoring = {}) const;
    // The protocol's keys on which that run (or point) differs, in the
    // protocol's order; "seeds" when the plan's seed list is not its.
    std::vector<std::string> protocol_deviations_of(const GridPoint& point, const std::vector<std::string>& ignoring = {}) const;
    std::vector<std::string> protocol_deviations_of(const Run& run, const std::vector<std::string>& ignoring = {}) const {
        return protocol_deviations_of(*run.point, ignoring);
    }
    // The first run of each point, in grid order: a check of what a run's
    // values decide (its memory, its data, its settings) asks a point
    // once, not once per seed, which never changes them (10^7 runs of ten
    // points are ten checks).
    std::vector<const Run*> first_run_of_each_point() const;
};

// A kind's keys, with those every kind takes (seeds, dtype), as a table:
// key, accepted values, default ("required" when none), help. What
// `ffn-lab list --keys KIND` prints and each experiment README holds.
report::Table key_table(const ExperimentKind& kind);

// Parses a JSON file; errors name the file, line and column.
Json load_json_file(const std::string& path);

// A config file with its "base" resolved: when the file names
// "base": "other.json" (a path relative to the file), the base is loaded
// the same way and this file's keys are merged into it by JSON Merge
// Patch (RFC 7386): objects merge key by key, anything else replaces, and
// null deletes the key. Chains are followed; a cycle or a chain deeper
// than 16 is an error naming the files. A base not found beside the file
// is looked for by name ("width" or "width.json") in `bundled`, the
// checkout's configs/ folder when there is one; the error names every
// path tried.
Json load_config(const std::string& path, const std::string& bundled = "");

// A bundled config named by its path under `bundled` (the checkout's
// configs/), with or without ".json": "width", "smoke/width_small". A name
// that is absolute or climbs out with ".." names no bundled config. A bare
// name that is no config's path is the one config of that name in a
// subfolder ("width_small" for smoke/width_small), if only one has it.
// `bundled` empty: the configs built into the binary (io/bundle.h). Every
// path looked at is appended to `tried`.
std::optional<std::string> find_bundled_config(const std::string& bundled, const std::string& name, std::vector<std::string>& tried);

// Every bundled config's name (its path under `bundled`, without ".json"),
// subfolders included, sorted: for listings and did-you-mean.
std::vector<std::string> bundled_config_names(const std::string& bundled);

// Validates `root` (from `source`) against its kind and expands the grid.
// Every defect is an ffn::Error naming the source, the key and what was
// expected; an unknown key comes with a did-you-mean suggestion.
Plan make_plan(const Json& root, const std::string& source, const std::vector<Override>& overrides,
               const std::vector<ExperimentKind>& kinds);

}  // namespace ffn::runner
