#pragma once
// `ffn-lab check`: regenerate a config and compare it with its expected
// tables. A root is an ffn-lab checkout (configs/ and experiments/; the
// expected tables in experiments/<kind>/expected/<config name>.json) or a
// user's study folder (configs/ alone; the expected tables in
// expected/<config name>.json beside it), as pytest-regressions keeps a
// test's data next to it. `update` rewrites that file from the fresh run
// (the first --update creates it); it is the only writer of expected
// tables.
#include <optional>
#include <string>
#include <vector>

#include "runner/experiment.h"

namespace ffn::runner {

enum class CheckStatus { ok, differs, error, updated, skipped };

struct CheckOutcome {
    std::string config;
    CheckStatus status = CheckStatus::error;
    std::vector<std::string> details;  // differences, or the error
};

// A root (an ffn-lab checkout, or a study folder) holds configs/ and
// experiments/: its configs folder ("" for no root), and the nearest root
// at or above `start` (none when no folder there holds both).
std::string configs_folder(const std::string& root);
std::optional<std::string> root_above(const std::string& start);

// configs/*.json under `root`, sorted by name.
std::vector<std::string> bundled_configs(const std::string& root);

// Throws ffn::Error unless the config lies directly in root/configs/: check
// acts only on the configs of its own root.
void require_in_checkout(const std::string& config_path, const std::string& root);

std::string expected_path(const std::string& root, const std::string& kind, const std::string& config_path);

// `bundled` is the checkout's configs folder, where a study's `base` may
// name a bundled config (runner::load_config). With `skip_long`, a config
// whose check is long (check.long) is not run: skipped.
CheckOutcome check_config(const std::string& config_path, const std::string& root, bool update,
                          const std::vector<ExperimentKind>& kinds, std::size_t threads, const std::string& bundled = "",
                          bool skip_long = false);

}  // namespace ffn::runner
