#include <doctest/doctest.h>

#include <filesystem>
#include <set>
#include <string>

#include "io/atomic_file.h"
#include "io/bundle.h"

namespace fs = std::filesystem;

TEST_CASE("the binary carries every bundled config and every file of experiments/*/data, byte for byte") {
    const fs::path source = FFNLAB_TEST_SOURCE_DIR;
    std::set<std::string> on_disk;
    for (const auto& e : fs::recursive_directory_iterator(source / "configs"))
        if (e.is_regular_file() && e.path().extension() == ".json") on_disk.insert(fs::relative(e.path(), source).generic_string());
    for (const auto& kind : fs::directory_iterator(source / "experiments"))
        if (fs::is_directory(kind.path() / "data"))
            for (const auto& e : fs::recursive_directory_iterator(kind.path() / "data"))
                if (e.is_regular_file()) on_disk.insert(fs::relative(e.path(), source).generic_string());
    std::set<std::string> carried;
    for (std::size_t i = 0; i < ffn::io::bundle::kFileCount; ++i) carried.insert(std::string(ffn::io::bundle::kFiles[i].path));
    CHECK(carried == on_disk);
    for (const auto& path : on_disk) {
        const auto bytes = ffn::io::bundle::find(path);
        REQUIRE(bytes);
        CHECK_MESSAGE(*bytes == ffn::io::read_file((source / path).string()), path);
    }
    CHECK_FALSE(ffn::io::bundle::find("configs/no_such.json"));
}

TEST_CASE("a data path falls back to the carried copy only where the working folder has no such file") {
    namespace bundle = ffn::io::bundle;
    // The tests run in the build folder, which has no experiments/.
    const std::string tiny = "experiments/layer_lab/data/tiny_gpt2";
    REQUIRE_FALSE(fs::exists(tiny));
    const std::string located = bundle::locate(tiny);
    CHECK(located == (fs::path(bundle::folder()) / tiny).string());
    CHECK(fs::is_regular_file(fs::path(located) / "model.safetensors"));
    CHECK(ffn::io::read_file((fs::path(located) / "config.json").string()) == *bundle::find(tiny + "/config.json"));
    // Folder prefixes match whole names only; absolute and unknown paths pass through.
    CHECK(bundle::locate("experiments/layer_lab/data/tiny_gpt") == "experiments/layer_lab/data/tiny_gpt");
    CHECK(bundle::locate("/abs/experiments/layer_lab/data/tiny_gpt2") == "/abs/experiments/layer_lab/data/tiny_gpt2");
    CHECK(bundle::locate("") == "");
    // Messages name a carried file as the checkout would, marked.
    CHECK(bundle::shown((fs::path(bundle::folder()) / "configs/width.json").string()) == "configs/width.json (built in)");
    CHECK(bundle::shown("configs/width.json") == "configs/width.json");
    CHECK(bundle::config_name("configs/width.json (built in)") == "width");
    // The unpacked folder is the user's alone.
    CHECK((fs::status(bundle::folder()).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
}
