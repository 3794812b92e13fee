// The experiment kinds, one per folder experiments/<kind>/ with a <kind>.cpp
// that defines ffn::experiments::<kind>::make(): the build lists the folders in
// generated/experiments/kinds.inc (experiments/CMakeLists.txt). An explicit,
// generated list rather than self-registering statics, which a static
// library would silently drop.
#include "experiments/registry.h"

namespace ffn::experiments {

#define FFNLAB_KIND(name) namespace name { runner::ExperimentKind make(); }
#include "experiments/kinds.inc"
#undef FFNLAB_KIND

const std::vector<runner::ExperimentKind>& all_kinds() {
    static const std::vector<runner::ExperimentKind> kinds = {
#define FFNLAB_KIND(name) name::make(),
#include "experiments/kinds.inc"
#undef FFNLAB_KIND
    };
    return kinds;
}

}  // namespace ffn::experiments
