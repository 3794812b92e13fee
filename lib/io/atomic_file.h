#pragma once
// Files that appear whole or not at all: write to a temporary file in the same
// folder, flush it to disk, then rename it over the target. A run killed
// mid-write leaves the old file (or none), never half a table.
#include <string>

namespace ffn::io {

// Throws ffn::Error naming the path when any step fails; the temporary file is
// removed on failure.
void write_file_atomically(const std::string& path, const std::string& contents);

// Reads a whole file; throws ffn::Error naming the path when it cannot.
std::string read_file(const std::string& path);

}  // namespace ffn::io
