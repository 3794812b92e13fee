#pragma once
// Every JSON text ffn-lab reads (configs, --set values, result tables,
// safetensors headers) is parsed here, so one set of rules holds for all of
// them: nesting at most kMaxJsonDepth deep (checked before parsing, so a
// hostile file cannot exhaust the stack), no NUL byte, nothing after the
// value, no key twice in one object, at most kMaxJsonKeys keys in one,
// every number within the range of a double. A defect is an ffn::Error naming `where` and, for syntax, the
// line and column.
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace ffn::io {

using Json = nlohmann::ordered_json;

inline constexpr int kMaxJsonDepth = 64;
// Keys in one object: a safetensors header has one per tensor (a large
// checkpoint file holds a few thousand).
inline constexpr std::size_t kMaxJsonKeys = 20000;

Json parse_json(std::string_view text, const std::string& where);

}  // namespace ffn::io
