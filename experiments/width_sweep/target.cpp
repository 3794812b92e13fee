#include "experiments/width_sweep/target.h"

#include <fmt/format.h>
#include <muParser.h>

#include <cmath>

#include "core/error.h"
#include "core/math.h"

namespace ffn::experiments::width_sweep {

namespace {
// muparser's own functions and its ^ call the C library, whose last bits
// differ between CPUs and systems; the target feeds every fit, so each one
// that is not exact (sum, min, abs ... are) is replaced by ffn::math's.
// Built-in operators cannot be redefined one by one, so they are all
// defined again here, with muparser's precedences and associativities.
void use_ffn_math(mu::Parser& parser) {
    parser.DefineFun("sin", +[](double v) { return math::sin(v); });
    parser.DefineFun("cos", +[](double v) { return math::cos(v); });
    parser.DefineFun("tan", +[](double v) { return math::tan(v); });
    parser.DefineFun("asin", +[](double v) { return math::asin(v); });
    parser.DefineFun("acos", +[](double v) { return math::acos(v); });
    parser.DefineFun("atan", +[](double v) { return math::atan(v); });
    parser.DefineFun("atan2", +[](double y, double x) { return math::atan2(y, x); });
    parser.DefineFun("sinh", +[](double v) { return math::sinh(v); });
    parser.DefineFun("cosh", +[](double v) { return math::cosh(v); });
    parser.DefineFun("tanh", +[](double v) { return math::tanh(v); });
    parser.DefineFun("asinh", +[](double v) { return math::asinh(v); });
    parser.DefineFun("acosh", +[](double v) { return math::acosh(v); });
    parser.DefineFun("atanh", +[](double v) { return math::atanh(v); });
    parser.DefineFun("log2", +[](double v) { return math::log2(v); });
    parser.DefineFun("log10", +[](double v) { return math::log10(v); });
    parser.DefineFun("log", +[](double v) { return math::log(v); });
    parser.DefineFun("ln", +[](double v) { return math::log(v); });
    parser.DefineFun("exp", +[](double v) { return math::exp(v); });
    parser.DefineFun("erf", +[](double v) { return math::erf(v); });
    parser.DefineFun("erfc", +[](double v) { return math::erfc(v); });

    parser.EnableBuiltInOprt(false);
    parser.DefineOprt("||", +[](double a, double b) { return double(a != 0 || b != 0); }, mu::prLOR);
    parser.DefineOprt("&&", +[](double a, double b) { return double(a != 0 && b != 0); }, mu::prLAND);
    parser.DefineOprt("<", +[](double a, double b) { return double(a < b); }, mu::prCMP);
    parser.DefineOprt(">", +[](double a, double b) { return double(a > b); }, mu::prCMP);
    parser.DefineOprt("<=", +[](double a, double b) { return double(a <= b); }, mu::prCMP);
    parser.DefineOprt(">=", +[](double a, double b) { return double(a >= b); }, mu::prCMP);
    parser.DefineOprt("==", +[](double a, double b) { return double(a == b); }, mu::prCMP);
    parser.DefineOprt("!=", +[](double a, double b) { return double(a != b); }, mu::prCMP);
    parser.DefineOprt("+", +[](double a, double b) { return a + b; }, mu::prADD_SUB);
    parser.DefineOprt("-", +[](double a, double b) { return a - b; }, mu::prADD_SUB);
    parser.DefineOprt("*", +[](double a, double b) { return a * b; }, mu::prMUL_DIV);
    parser.DefineOprt("/", +[](double a, double b) { return a / b; }, mu::prMUL_DIV);
    parser.DefineOprt("^", +[](double a, double b) { return math::pow(a, b); }, mu::prPOW, mu::oaRIGHT);
}
}  // namespace

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
        use_ffn_math(impl_->parser);
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
        throw Error(fmt::format("key '{}': the expression is not finite at x = {:.6g}", key_, x));
    return y;
}

}  // namespace ffn::experiments::width_sweep
