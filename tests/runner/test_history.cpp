// `ffn-lab results`' walk (runner::result_folders) while other processes
// change the tree it walks.
#include <doctest/doctest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "core/error.h"
#include "runner/history.h"
#include "support.h"

namespace fs = std::filesystem;

namespace {
void write_set(const fs::path& folder) {
    fs::create_directories(folder);
    std::ofstream(folder / "manifest.json")
        << R"({"experiment": "width_sweep", "config_file": "w.json", "started_utc": "2026-12-06T00:00:00Z", "output_files": ["manifest.json"]})";
}
}  // namespace

TEST_CASE("results: folders that vanish while the tree is listed are passed over, and every set that stays is listed") {
    ffn::test::TempDir dir;
    write_set(dir.path() / "study/kept");
    // Another process makes and deletes folders (a sweep's staging folder,
    // a set being removed) as fast as it can while results walks.
    std::atomic<bool> done{false};
    std::thread churn([&] {
        for (int i = 0; !done; ++i) {
            const fs::path f = dir.path() / "study" / ("gone" + std::to_string(i % 4));
            std::error_code ec;
            fs::create_directories(f / "a/b/c", ec);
            if (i % 2) write_set(f / "a");
            fs::remove_all(f, ec);
        }
    });
    int listings = 0, kept = 0;
    std::string failed;
    for (; listings < 400 && failed.empty(); ++listings) {
        try {
            const auto table = ffn::runner::result_folders({dir.path().string()});
            for (const auto& row : table.rows()) kept += std::get<std::string>(row[0]).ends_with("study/kept");
        } catch (const ffn::Error& e) {
            failed = "listing " + std::to_string(listings) + " failed: " + e.what();
        }
    }
    done = true;
    churn.join();
    CHECK(failed == "");
    CHECK(kept == 400);
}

TEST_CASE("results: a hidden folder (a sweep's staging folder, a replaced set on its way out) is not listed") {
    ffn::test::TempDir dir;
    write_set(dir.path() / "study/w");
    write_set(dir.path() / "study/.w.staging-Ab12Cd");  // its manifest is written before the rename
    const auto table = ffn::runner::result_folders({dir.path().string()});
    REQUIRE(table.row_count() == 1);
    CHECK(std::get<std::string>(table.rows()[0][0]).ends_with("study/w"));
}
