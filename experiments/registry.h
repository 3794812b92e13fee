#pragma once
// Every experiment kind ffn-lab knows (one per folder under experiments/), in
// the order `ffn-lab list` shows them: alphabetical.
#include <vector>

#include "runner/experiment.h"

namespace ffn::experiments {

const std::vector<runner::ExperimentKind>& all_kinds();

}  // namespace ffn::experiments
