#pragma once
// glu_variants' parameter matching, shared with its tests.
#include <cstddef>
#include <string>
#include <vector>

#include "runner/experiment.h"

namespace ffn::experiments::glu_variants {

// The models by config name, in table order.
const std::vector<std::string>& model_names();
// The most hidden units of `model` whose weights fit in `budget` at width d.
std::size_t hidden_width(const std::string& model, std::size_t d, std::size_t budget);
runner::ExperimentKind make();

}  // namespace ffn::experiments::glu_variants
