#pragma once
// Every experiment kind ffn-lab knows, in the order `ffn-lab list` shows them.
#include <vector>

#include "runner/experiment.h"

namespace ffn::experiments {

const std::vector<runner::ExperimentKind>& all_kinds();

}  // namespace ffn::experiments
