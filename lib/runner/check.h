#pragma once
// `ffn-lab check`: regenerate a bundled config and compare it with the
// expected table kept in experiments/<kind>/expected/<config name>.json.
// `update` rewrites that file from the fresh run; it is the only writer of
// expected tables.
#include <string>
#include <vector>

#include "runner/experiment.h"

namespace ffn::runner {

enum class CheckStatus { ok, differs, error, updated };

struct CheckOutcome {
    std::string config;
    CheckStatus status = CheckStatus::error;
    std::vector<std::string> details;  // differences, or the error
};

// configs/*.json under `root`, sorted by name.
std::vector<std::string> bundled_configs(const std::string& root);

// Throws ffn::Error unless the config lies directly in root/configs/: check
// acts only on the bundled configs of its own checkout.
void require_in_checkout(const std::string& config_path, const std::string& root);

std::string expected_path(const std::string& root, const std::string& kind, const std::string& config_path);

CheckOutcome check_config(const std::string& config_path, const std::string& root, bool update,
                          const std::vector<ExperimentKind>& kinds, std::size_t threads);

}  // namespace ffn::runner
