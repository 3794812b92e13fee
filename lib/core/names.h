#pragma once
// Choices named as configs name them (activation, init scheme, optimizer,
// schedule, loss): an enum whose values index one list of names, read once
// at the boundary so hot code switches on the enum, never on a string.
#include <optional>
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

// The closest of `candidates` to `word` when near enough to be a likely
// typo (an edit distance of at most a third of the word, and at least 2).
std::optional<std::string> did_you_mean(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace ffn
