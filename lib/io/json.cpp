#include "io/json.h"

#include <algorithm>
#include <set>
#include <vector>

#include "core/error.h"

namespace ffn::io {

namespace {

// "where:LINE:COLUMN" for a byte offset into text.
std::string position(std::string_view text, std::size_t at, const std::string& where) {
    at = std::min(at, text.size());
    const auto before = text.substr(0, at);
    const std::size_t line = 1 + static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n'));
    const std::size_t line_start = before.rfind('\n');
    const std::size_t column = at - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
    return where + ":" + std::to_string(line) + ":" + std::to_string(column);
}

// Bounds the nesting before the recursive parser sees it.
void check_depth(std::string_view text, const std::string& where) {
    int depth = 0;
    bool in_string = false, escaped = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > kMaxJsonDepth)
                throw Error(position(text, i, where) + ": invalid JSON: nested more than " +
                            std::to_string(kMaxJsonDepth) + " levels deep");
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

}  // namespace

Json parse_json(std::string_view text, const std::string& where) {
    if (const auto nul = text.find('\0'); nul != std::string_view::npos)
        throw Error(position(text, nul, where) + ": invalid JSON: a NUL byte");
    check_depth(text, where);
    // Keys seen so far in each open object, innermost last.
    std::vector<std::set<std::string>> open;
    const Json::parser_callback_t reject_duplicates = [&](int, Json::parse_event_t event, Json& parsed) {
        if (event == Json::parse_event_t::object_start) open.emplace_back();
        else if (event == Json::parse_event_t::object_end && !open.empty()) open.pop_back();
        else if (event == Json::parse_event_t::key && !open.empty() && !open.back().insert(parsed.get<std::string>()).second)
            // At once: parsing on would cost a linear search per repeat.
            throw Error(where + ": invalid JSON: key '" + parsed.get<std::string>() + "' appears twice in one object");
        // An ordered object finds each new key by a linear search: bounded,
        // so that a hostile file cannot make parsing quadratic for minutes.
        if (event == Json::parse_event_t::key && !open.empty() && open.back().size() > kMaxJsonKeys)
            throw Error(where + ": invalid JSON: an object with more than " + std::to_string(kMaxJsonKeys) + " keys");
        return true;
    };
    Json value;
    try {
        value = Json::parse(text.begin(), text.end(), reject_duplicates);
    } catch (const Json::parse_error& e) {
        std::string what = e.what();
        if (const auto p = what.find("syntax error"); p != std::string::npos) what = what.substr(p);
        throw Error(position(text, e.byte == 0 ? 0 : e.byte - 1, where) + ": invalid JSON: " + what);
    } catch (const Json::exception& e) {
        // e.g. out_of_range 406, a number beyond the range of a double.
        std::string what = e.what();
        if (const auto p = what.find("] "); p != std::string::npos) what = what.substr(p + 2);
        throw Error(where + ": invalid JSON: " + what);
    }
    return value;
}

}  // namespace ffn::io
