#pragma once
// Numbers, vectors and matrices as the short text the reference documents
// print them, for table cells.
#include <fmt/format.h>

#include <string>
#include <string_view>

namespace ffn::report {

// A number as the documents write it: shortest round-trip form, "-0" as "0".
inline std::string number_text(double v) { return v == 0.0 ? "0" : fmt::format("{}", v); }

// "1 seed", "3 seeds": a count and its noun, in the number the count asks for.
inline std::string counted(std::size_t n, std::string_view noun) {
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
}

// A wall time as a person reads it: "0.42 s", "12.3 s", "243 s".
inline std::string seconds_text(double s) {
    return s < 10 ? fmt::format("{:.2f} s", s) : s < 100 ? fmt::format("{:.1f} s", s) : fmt::format("{:.0f} s", s);
}

// Text as a terminal should show it: control characters (ESC, BEL, a
// newline) written as \xNN, so that a line stays one line and no escape
// sequence from a file, a key or a variable reaches the terminal.
inline std::string printable(std::string_view text) {
    std::string out;
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u == 0x7f) out += fmt::format("\\x{:02x}", u);
        else out += c;
    }
    return out;
}

template <class Container>
std::string vector_text(const Container& v) {
    std::string out = "(";
    bool first = true;
    for (const auto& e : v) {
        if (!first) out += ", ";
        out += number_text(static_cast<double>(e));
        first = false;
    }
    return out + ")";
}

// Any 2-D container with shape() and (r, c): "[a b; c d]".
template <class M>
std::string matrix_text(const M& m) {
    std::string out = "[";
    for (std::size_t r = 0; r < m.shape()[0]; ++r) {
        if (r) out += "; ";
        for (std::size_t c = 0; c < m.shape()[1]; ++c) {
            if (c) out += " ";
            out += number_text(static_cast<double>(m(r, c)));
        }
    }
    return out + "]";
}

}  // namespace ffn::report
