#pragma once
// The files ffn-lab carries inside its binary: every bundled config
// (configs/**.json) and the data they name (experiments/*/data/**), by
// their paths in the checkout. A copied or installed binary runs
// `ffn-lab sweep width` and the layer lab's configs from any folder;
// inside a checkout the checkout's own files win.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace ffn::io::bundle {

struct BundledFile {
    std::string_view path;   // relative to the checkout: "configs/width.json"
    std::string_view bytes;
};
// Written by cmake/bundle.cmake at build time.
extern const BundledFile kFiles[];
extern const std::size_t kFileCount;

// The carried file at `path` (checkout-relative, as in kFiles), if any.
std::optional<std::string_view> find(std::string_view path);

// A private folder (mkdtemp, mode 0700, under $TMPDIR or /tmp) holding
// every carried file at its checkout path, made on the first call and
// removed when the process ends: the code that reads configs and weights
// by path reads the carried ones the same way. Throws ffn::Error naming the
// folder when it cannot be written.
const std::string& folder();

// For a signal handler that ends the process: removes what folder() made
// with unlink(2) and rmdir(2) alone (async-signal-safe), from the list of
// its paths made as it was filled. Nothing to do before folder() is called.
void remove_folder_in_signal() noexcept;

// Where to read a config's data path from: `path` itself when it is
// absolute or exists from the working folder; else, when ffn-lab carries
// a file or folder of that relative path (the layer lab's
// "experiments/layer_lab/data/tiny_gpt2"), its copy in folder(); else
// `path`, for the reader to name as missing.
std::string locate(const std::string& path);

// A path inside folder() as the checkout would name it, marked as built in
// ("configs/width.json (built in)"), for manifests and messages; any other
// path as is.
std::string shown(const std::string& path);
inline constexpr std::string_view kShownSuffix = " (built in)";
// The config's name as a path (".../width.json" -> "width"), whether shown
// or not.
std::string config_name(const std::string& path);

}  // namespace ffn::io::bundle
