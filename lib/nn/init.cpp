#include "nn/init.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/names.h"

namespace ffn::nn {

const std::vector<std::string>& init_scheme_names() {
    static const std::vector<std::string> names = {"torch_default", "xavier_uniform", "xavier_normal", "kaiming_normal",
                                                   "normal",        "uniform",        "zeros",         "constant"};
    return names;
}

InitScheme parse_init_scheme(std::string_view name) { return parse_name<InitScheme>(name, init_scheme_names(), "init scheme"); }

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string prefix_of(const std::string& name) { return name.substr(0, name.rfind('.') + 1); }

template <class T>
void fill(const ParamRef<T>& p, const InitSpec& spec, double fan_in, double fan_out, Rng& rng) {
    for (std::size_t i = 0; i < p.size(); ++i) {
        double v = 0;
        switch (spec.scheme) {
            case InitScheme::torch_default: v = rng.uniform(-1 / std::sqrt(fan_in), 1 / std::sqrt(fan_in)); break;
            case InitScheme::xavier_uniform: {
                const double a = std::sqrt(6 / (fan_in + fan_out));
                v = rng.uniform(-a, a);
                break;
            }
            case InitScheme::xavier_normal: v = rng.normal(0, std::sqrt(2 / (fan_in + fan_out))); break;
            case InitScheme::kaiming_normal: v = rng.normal(0, std::sqrt(2 / fan_in)); break;
            case InitScheme::normal: v = rng.normal(0, spec.std); break;
            case InitScheme::uniform: v = rng.uniform(spec.lo, spec.hi); break;
            case InitScheme::zeros: break;
            case InitScheme::constant: v = spec.value; break;
        }
        p.value[i] = static_cast<T>(v);
    }
}

}  // namespace

template <class T>
void initialize(Module<T>& module, const InitSpec& spec, Rng& rng) {
    std::string weight_prefix;
    double fan_in = 1;
    for (const auto& p : module.parameters()) {
        if (p.shape.size() == 2) {
            fan_in = static_cast<double>(p.shape[1]);
            weight_prefix = prefix_of(p.name);
            fill(p, spec, fan_in, static_cast<double>(p.shape[0]), rng);
        } else if (ends_with(p.name, "bias") && prefix_of(p.name) == weight_prefix) {
            if (spec.scheme == InitScheme::torch_default) fill(p, spec, fan_in, 0, rng);
            else std::fill(p.value, p.value + p.size(), T(0));
        }
    }
}

template void initialize<float>(Module<float>&, const InitSpec&, Rng&);
template void initialize<double>(Module<double>&, const InitSpec&, Rng&);

}  // namespace ffn::nn
