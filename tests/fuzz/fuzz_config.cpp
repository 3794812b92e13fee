// A config and `--set` overrides through parsing, validation against every
// kind's schema and the grid's expansion: what `ffn-lab sweep` does before
// the first run. The input is the config's text; lines after a line
// "--set" are overrides, one per line.
#include <string>
#include <vector>

#include "experiments/registry.h"
#include "runner/config.h"
#include "tests/fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const std::string_view separator = "\n--set\n";
    const auto split = input.find(separator);
    return ffn::fuzz::accept_or_refuse([&] {
        std::vector<ffn::runner::Override> overrides;
        if (split != std::string_view::npos) {
            std::string_view rest = input.substr(split + separator.size());
            while (!rest.empty()) {
                const auto end = rest.find('\n');
                overrides.push_back(ffn::runner::parse_override(std::string(rest.substr(0, end))));
                rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
            }
        }
        const std::string path = ffn::fuzz::scratch_file("config.json", input.substr(0, split));
        ffn::runner::make_plan(ffn::runner::load_config(path), path, overrides, ffn::experiments::all_kinds());
    });
}
