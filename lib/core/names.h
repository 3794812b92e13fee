#pragma once
// Choices named as configs name them (activation, init scheme, optimizer,
// schedule, loss): an enum whose values index one list of names, read once
// at the boundary so hot code switches on the enum, never on a string.
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace ffn {

// The enum value whose name is `name`; else ffn::Error naming `what` and
// every choice: "unknown optimizer 'adagrad' (expected one of: sgd, adam, adamw)".
template <class E>
E parse_name(std::string_view name, const std::vector<std::string>& names, std::string_view what) {
    for (std::size_t i = 0; i < names.size(); ++i)
        if (names[i] == name) return static_cast<E>(i);
    std::string known;
    for (const auto& n : names) known += (known.empty() ? "" : ", ") + n;
    throw Error("unknown " + std::string(what) + " '" + std::string(name) + "' (expected one of: " + known + ")");
}

template <class E>
const std::string& name_of(E value, const std::vector<std::string>& names) {
    return names.at(static_cast<std::size_t>(value));
}

}  // namespace ffn
