#pragma once
// How long a plan will take, before it runs (sweep --dry-run): measured, on
// a sample of its work units run for a few steps.
#include <cstddef>
#include <string>

#include "runner/config.h"

namespace ffn::runner {

// One line: "estimated time: about 3.1 s (...)", or why it was not
// measured (a kind that trains nothing; steps swept).
std::string estimate_time(const Plan& plan, std::size_t threads);

}  // namespace ffn::runner
