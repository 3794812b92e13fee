// Each experiment README's key table is `ffn-lab list --keys KIND` as it is
// now: a key added, renamed or given another range or default fails here
// until the README shows it. To refresh a block, paste that command's table
// between the README's markers.
#include <doctest/doctest.h>

#include <string>

#include "experiments/registry.h"
#include "io/atomic_file.h"
#include "report/table_io.h"
#include "runner/config.h"
#include "support.h"

TEST_CASE("every kind's README holds its key table as ffn-lab list --keys prints it") {
    for (const auto& kind : ffn::experiments::all_kinds()) {
        CAPTURE(kind.name);
        const std::string readme = ffn::io::read_file(ffn::test::source_path("experiments/" + kind.name + "/README.md"));
        const std::string begin =
            "<!-- keys: the output of `ffn-lab list --keys " + kind.name + "`, checked by tests/experiments/test_readme_keys.cpp -->\n";
        const auto from = readme.find(begin);
        REQUIRE_MESSAGE(from != std::string::npos, "no key block in experiments/" << kind.name << "/README.md");
        const auto to = readme.find("<!-- end of keys -->", from);
        REQUIRE(to != std::string::npos);
        const std::string block = readme.substr(from + begin.size(), to - from - begin.size());
        CHECK(block == ffn::report::to_markdown(ffn::runner::key_table(kind)));
    }
}
