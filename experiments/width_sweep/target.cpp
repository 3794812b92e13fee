#include "experiments/width_sweep/target.h"

#include <muParser.h>

#include <cmath>

#include "core/error.h"

namespace ffn::experiments::width_sweep {

struct TargetFunction::Impl {
    mu::Parser parser;
    double x = 0;
};

TargetFunction::TargetFunction(const std::string& expression, const std::string& key)
    : impl_(std::make_unique<Impl>()), key_(key) {
    // muParser stops at a NUL, so "sin(x)\0anything" would read as sin(x);
    // no control character belongs in an expression.
    for (const char c : expression)
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
            throw Error("key '" + key + "': a control character (code " + std::to_string(static_cast<int>(c)) +
                        ") in the expression");
    try {
        impl_->parser.DefineVar("x", &impl_->x);
        impl_->parser.SetExpr(expression);
        impl_->parser.Eval();  // parses now, so a bad expression fails before any training
    } catch (const mu::Parser::exception_type& e) {
        throw Error("key '" + key + "': cannot read \"" + expression + "\" as an expression in x (" + e.GetMsg() + ")");
    }
}

TargetFunction::~TargetFunction() = default;

double TargetFunction::operator()(double x) {
    impl_->x = x;
    const double y = impl_->parser.Eval();
    if (!std::isfinite(y))
        throw Error("key '" + key_ + "': the expression is not finite at x = " + std::to_string(x));
    return y;
}

}  // namespace ffn::experiments::width_sweep
