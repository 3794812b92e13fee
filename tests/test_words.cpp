// What a user reads calls the reference documents "doc 001", never
// "seed 001": seeds are the RNG's. Checked over the READMEs, the configs
// (their descriptions print in `list` and in every manifest) and the
// kinds' sources, whose descriptions and table texts print too.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "runner/sweep.h"
#include "support.h"

namespace fs = std::filesystem;

TEST_CASE("no text a user reads calls a reference document a seed") {
    const fs::path root = ffn::test::source_path("");
    std::vector<fs::path> files = {root / "README.md"};
    for (const char* folder : {"configs", "experiments", "app", "lib"})
        for (const auto& e : fs::recursive_directory_iterator(root / folder))
            if (e.is_regular_file() && (e.path().extension() == ".md" || e.path().extension() == ".json" ||
                                        e.path().extension() == ".cpp" || e.path().extension() == ".h"))
                files.push_back(e.path());
    // "seed 003" or "seeds 001, 002": a document's number after the word.
    const std::regex document_called_seed(R"(\bseeds? 00[0-4]\b)");
    std::size_t read = 0;
    for (const auto& file : files) {
        if (file.string().find("/expected/") != std::string::npos) continue;  // tables, written by ffn-lab
        std::ifstream in(file);
        std::stringstream text;
        text << in.rdbuf();
        ++read;
        CAPTURE(file.string());
        CHECK_FALSE(std::regex_search(text.str(), document_called_seed));
    }
    CHECK(read > 100);  // the walk found the tree
}

// ctest runs each TEST_CASE by its name, cut at the first ';' (a CMake list
// separator): a name with one runs no test at all and passes. Twelve did,
// one of them stale.
TEST_CASE("no test case's name holds a semicolon, which would make ctest run nothing for it") {
    namespace fs = std::filesystem;
    for (const auto& entry : fs::recursive_directory_iterator(ffn::test::source_path("tests"))) {
        if (entry.path().extension() != ".cpp") continue;
        std::ifstream in(entry.path());
        std::string line;
        for (int n = 1; std::getline(in, line); ++n) {
            const auto at = line.find("TEST_CASE(\"");
            if (at == std::string::npos) continue;
            const auto end = line.find('"', at + 11);
            CHECK_MESSAGE(line.substr(at, end - at).find(';') == std::string::npos, entry.path().string() << ":" << n);
        }
    }
}

// README's "Building by hand" lists the packages build.sh installs: a
// by-hand build that stops at cmake for want of one (pkg-config, libssl-dev)
// is a missing line in one of the two.
TEST_CASE("README's package list for a build by hand is build.sh's list") {
    const auto words_of = [](const std::string& text) {
        std::vector<std::string> words;
        std::istringstream in(text);
        for (std::string w; in >> w;)
            if (w != "\\") words.push_back(w);
        std::sort(words.begin(), words.end());
        return words;
    };
    std::ifstream script(ffn::test::source_path("build.sh"));
    std::stringstream s;
    s << script.rdbuf();
    const std::string build_sh = s.str();
    const auto begin = build_sh.find("PACKAGES=\"");
    REQUIRE(begin != std::string::npos);
    const auto end = build_sh.find('"', begin + 10);
    const auto packages = words_of(build_sh.substr(begin + 10, end - begin - 10));
    std::ifstream readme(ffn::test::source_path("README.md"));
    std::stringstream r;
    r << readme.rdbuf();
    const std::string text = r.str();
    const auto install = text.find("sudo apt-get install ", text.find("## Building by hand"));
    REQUIRE(install != std::string::npos);
    const auto stop = text.find("\n\n", install);
    CHECK(words_of(text.substr(install + 21, stop - install - 21)) == packages);
    CHECK(packages.size() > 10);
}

// The README's --out example names the folder sweep really makes.
TEST_CASE("README's default --out folder is the one sweep makes") {
    const std::string made = ffn::runner::default_output_folder("configs/width.json");
    CHECK(std::regex_match(made, std::regex(R"(results/width/\d{8}-\d{6})")));
    std::ifstream readme(ffn::test::source_path("README.md"));
    std::stringstream r;
    r << readme.rdbuf();
    CHECK(r.str().find("results/width/YYYYMMDD-HHMMSS/ (UTC)") != std::string::npos);
    CHECK(std::regex_search(r.str(), std::regex(R"(ffn-lab diff results/width/\d{8}-\d{6} results/width/\d{8}-\d{6})")));
}

// A README's link to a file of the repository (a figure, another README,
// a config) names a file that is there: a figure moved or a folder renamed
// leaves no broken image or link behind.
TEST_CASE("every README's links to files of the repository resolve") {
    const fs::path root = ffn::test::source_path("");
    std::vector<fs::path> readmes = {root / "README.md"};
    for (const char* folder : {"experiments", "lib", "app", "configs", "tests"})
        for (const auto& e : fs::recursive_directory_iterator(root / folder))
            if (e.is_regular_file() && e.path().extension() == ".md") readmes.push_back(e.path());
    const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
    std::size_t checked = 0;
    for (const auto& readme : readmes) {
        std::ifstream in(readme);
        std::stringstream text;
        text << in.rdbuf();
        const std::string s = text.str();
        for (auto it = std::sregex_iterator(s.begin(), s.end(), link); it != std::sregex_iterator(); ++it) {
            const std::string target = (*it)[1].str();
            if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
            ++checked;
            CAPTURE(readme.string());
            CAPTURE(target);
            CHECK(fs::exists(readme.parent_path() / target));
        }
    }
    CHECK(checked > 10);  // the links were found
}

// The README's gallery is what `./build.sh figures` makes: the same list of
// images (build.sh's FIGURES lines name each config, its figures and its
// kind), each one committed.
TEST_CASE("the README's gallery shows exactly the figures ./build.sh figures writes") {
    const fs::path root = ffn::test::source_path("");
    std::ifstream script(root / "build.sh");
    std::string line;
    std::vector<std::string> made;
    bool in_list = false;
    while (std::getline(script, line)) {
        if (line.find("<<'FIGURES'") != std::string::npos) {
            in_list = true;
            continue;
        }
        if (line == "FIGURES") break;
        if (!in_list) continue;
        std::istringstream words(line);
        std::string config, names, kind;
        words >> config >> names >> kind;
        std::istringstream each(names);
        for (std::string name; std::getline(each, name, ',');) made.push_back("experiments/" + kind + "/figures/" + name + ".png");
    }
    std::ifstream in(root / "README.md");
    std::stringstream text;
    text << in.rdbuf();
    const std::string readme = text.str();
    const std::regex image(R"(!\[[^\]]*\]\((experiments/[a-z_]+/figures/[a-z_]+\.png)\))");
    std::vector<std::string> shown;
    for (auto it = std::sregex_iterator(readme.begin(), readme.end(), image); it != std::sregex_iterator(); ++it) shown.push_back((*it)[1]);
    std::sort(made.begin(), made.end());
    std::sort(shown.begin(), shown.end());
    CHECK(made.size() >= 5);
    CHECK(shown == made);
    for (const auto& png : made) {
        CAPTURE(png);
        CHECK(fs::exists(root / png));
    }
}
