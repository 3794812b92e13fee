// The width sweep's target expression (muParser), parsed and evaluated over
// the interval and at its edges, as the sweep samples it.
#include "experiments/width_sweep/target.h"
#include "tests/fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string expression(reinterpret_cast<const char*>(data), size);
    return ffn::fuzz::accept_or_refuse([&] {
        ffn::experiments::width_sweep::TargetFunction f(expression, "target");
        for (const double x : {-1.0, -0.5, 0.0, 0.25, 1.0, 1e-300, -1e300}) f(x);
    });
}
