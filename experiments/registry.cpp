// One line per experiment kind. An explicit list, not self-registering
// statics, which a static library would silently drop.
#include "experiments/registry.h"

namespace ffn::experiments {

runner::ExperimentKind make_param_count();
runner::ExperimentKind make_abs_construction();
runner::ExperimentKind make_residual_ablation();
runner::ExperimentKind make_width_sweep();
runner::ExperimentKind make_linear_collapse();
runner::ExperimentKind make_tokenwise();
runner::ExperimentKind make_key_value();
runner::ExperimentKind make_firing_fraction();

const std::vector<runner::ExperimentKind>& all_kinds() {
    static const std::vector<runner::ExperimentKind> kinds = {
        make_param_count(),
        make_abs_construction(),
        make_residual_ablation(),
        make_width_sweep(),
        make_linear_collapse(),
        make_tokenwise(),
        make_key_value(),
        make_firing_fraction(),
    };
    return kinds;
}

}  // namespace ffn::experiments
