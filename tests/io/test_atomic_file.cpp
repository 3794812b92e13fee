#include <doctest/doctest.h>

#include <filesystem>

#include "core/error.h"
#include "io/atomic_file.h"
#include "support.h"

TEST_CASE("an atomic write replaces the file whole and leaves no temporary behind") {
    ffn::test::TempDir dir;
    const std::string path = dir.file("table.md");
    ffn::io::write_file_atomically(path, "first");
    ffn::io::write_file_atomically(path, "second version");
    CHECK(ffn::io::read_file(path) == "second version");
    int files = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path())) ++files;
    CHECK(files == 1);
}

TEST_CASE("a write into a missing folder fails with the path and creates nothing") {
    ffn::test::TempDir dir;
    const std::string path = dir.file("no/such/folder/table.md");
    CHECK_THROWS_WITH_AS(ffn::io::write_file_atomically(path, "x"), doctest::Contains(path.c_str()), ffn::Error);
    CHECK_FALSE(std::filesystem::exists(dir.path() / "no"));
    CHECK_THROWS_WITH_AS(ffn::io::read_file(dir.file("absent")), doctest::Contains("absent: cannot open"), ffn::Error);
}
