#pragma once
// The target function of a fit, written in the config as an expression in x
// ("sin(3*x)", "abs(x)", "x^2"), read with muparser, a maintained
// expression library, rather than a parser of our own; its functions and
// operators are ffn::math's, so a target has the same bits on every CPU.
#include <memory>
#include <string>

namespace ffn::experiments::width_sweep {

class TargetFunction {
public:
    // Throws ffn::Error naming the config key and muparser's complaint.
    TargetFunction(const std::string& expression, const std::string& key);
    ~TargetFunction();
    TargetFunction(const TargetFunction&) = delete;
    TargetFunction& operator=(const TargetFunction&) = delete;

    double operator()(double x);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
    std::string key_;
};

}  // namespace ffn::experiments::width_sweep
