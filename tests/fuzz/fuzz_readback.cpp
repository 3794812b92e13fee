// The files ffn-lab reads back from its own folders, which anyone who can
// write those folders can change: an --out folder's manifest.json (judged
// by runner::check_output_folder before a set replaces the folder), a
// shard's shard.json (runner::read_shard_record, as merge reads it) and a
// run-cache segment (RunCache::load, as a resumed sweep reads it). The
// input's first line names the file ("manifest", "shard" or "entry"); the
// rest is its text, where an entry's KEY stands for the key of the run it
// is read for (so that mutations reach the entry's parser and its MAC).
#include <filesystem>
#include <string>

#include "experiments/registry.h"
#include "runner/config.h"
#include "runner/output_set.h"
#include "runner/run_cache.h"
#include "runner/shard.h"
#include "tests/fuzz/harness.h"

namespace {

// A plan whose one run a cache entry claims to be.
const ffn::runner::Plan& tiny_plan() {
    static const ffn::runner::Plan plan = [] {
        const std::string path = ffn::fuzz::scratch_file(
            "tiny.json", R"({"experiment": "width_sweep", "seeds": [0], "steps": 1, "model": {"width": 2}, "samples": 8})");
        return ffn::runner::make_plan(ffn::runner::load_config(path), path, {}, ffn::experiments::all_kinds());
    }();
    return plan;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char*>(data), size);
    const auto newline = input.find('\n');
    if (newline == std::string_view::npos) return 0;
    const std::string_view which = input.substr(0, newline), text = input.substr(newline + 1);
    namespace fs = std::filesystem;
    const fs::path folder = ffn::fuzz::scratch_folder() / "readback";
    std::error_code ec;
    fs::remove_all(folder, ec);
    fs::create_directories(folder / "runs");
    return ffn::fuzz::accept_or_refuse([&] {
        if (which == "manifest") {
            ffn::io::write_file_atomically((folder / "manifest.json").string(), std::string(text));
            ffn::io::write_file_atomically((folder / "params.csv").string(), "d\n1\n");
            ffn::runner::check_output_folder(folder.string(), "configs/params.json");
        } else if (which == "shard") {
            ffn::io::write_file_atomically((folder / "shard.json").string(), std::string(text));
            std::vector<std::string> caches;
            ffn::runner::plan_from_shards({folder.string()}, ffn::experiments::all_kinds(), caches);
        } else if (which == "entry") {
            const auto& plan = tiny_plan();
            std::string segment(text);
            const std::string key = ffn::runner::RunCache((folder / "runs").string()).key(plan.kind->name, plan.runs.front());
            for (auto at = segment.find("KEY"); at != std::string::npos; at = segment.find("KEY", at + key.size()))
                segment.replace(at, 3, key);
            ffn::io::write_file_atomically((folder / "runs" / "seg-0000000000000000.ffnruns").string(), segment);
            const ffn::runner::RunCache cache((folder / "runs").string());
            cache.load(plan.kind->name, plan.runs.front());
        }
    });
}
