// The architecture, checked on the source tree: each layer of lib/ includes
// only the layers below it, an experiment kind includes no other kind's
// folder, nothing in lib/ reaches up into experiments/ or app/, and only a
// kernels/ folder's files include the intrinsics. The build alone cannot
// refuse an upward include (every target sees lib/), so this test does.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "support.h"

namespace fs = std::filesystem;

namespace {

// The layers each layer may include besides itself ("ffnlab" is the build's
// generated build_info.h). Keep in step with lib/CMakeLists.txt and lib/README.md.
const std::map<std::string, std::set<std::string>> kAllowed = {
    {"core", {}},
    {"io", {"core"}},
    {"gemm", {"core"}},
    {"nn", {"core", "io", "gemm"}},
    {"train", {"core", "io", "gemm", "nn"}},
    {"analysis", {"core", "io", "gemm", "nn"}},
    {"report", {"core", "io"}},
    {"runner", {"core", "io", "report", "ffnlab"}},
    {"bench", {"core", "io", "gemm", "nn", "train", "report", "runner"}},
    // A kind computes through nn, train and analysis, never the gemm core
    // itself: a kind's hand-written products would be an engine, and
    // engines live in lib/ with their tests.
    {"experiments", {"core", "io", "nn", "train", "analysis", "report", "runner"}},
    // serve is app/serve/, the front end's own server (included as "serve/...").
    {"app", {"core", "io", "gemm", "nn", "train", "analysis", "report", "runner", "bench", "experiments", "ffnlab", "serve"}},
};

struct Include {
    std::string file, target;
    int line;
};

// The folders an include of the project's own may start with, in quotes
// or in angle brackets (<gemm/gemm.h> compiles too: every target sees lib/).
bool is_project_folder(const std::string& first) {
    return kAllowed.count(first) > 0 || first == "experiments" || first == "serve" || first == "ffnlab";
}

// Every #include of `file`: quoted ones, and bracketed ones of the
// project's folders (a system header, <vector>, is nobody's layer).
std::vector<Include> includes_of(const fs::path& file, bool project_only) {
    static const std::regex include(R"re(^\s*#\s*include\s*([<"])([^">]+)[">])re");
    std::vector<Include> out;
    std::ifstream in(file);
    std::string text;
    for (int line = 1; std::getline(in, text); ++line) {
        std::smatch m;
        if (!std::regex_search(text, m, include)) continue;
        const std::string target = m[2].str();
        const bool bracketed = m[1].str() == "<";
        if (project_only && bracketed && !is_project_folder(target.substr(0, target.find('/')))) continue;
        if (project_only && bracketed && target.find('/') == std::string::npos) continue;
        out.push_back({file.string(), target, line});
    }
    return out;
}

std::vector<Include> project_includes(const fs::path& file) { return includes_of(file, true); }

// The x86 intrinsics' headers: per-ISA code, whose place is a kernels/
// folder compiled with its family's flags behind one dispatch point.
bool is_intrinsics_header(const std::string& target) {
    static const std::regex header(R"re(^[a-z0-9]*intrin\.h$)re");
    return std::regex_match(target, header);
}

// What is wrong with `inc` made from a file of `layer` (and of experiment
// kind `kind`, empty elsewhere); empty when it is allowed.
std::string violation(const std::string& layer, const std::string& kind, const std::string& target) {
    const auto slash = target.find('/');
    if (slash == std::string::npos) return "";  // a file of the same folder
    const std::string to = target.substr(0, slash);
    if (to == layer) {
        if (layer != "experiments" || kind.empty()) return "";
        const std::string rest = target.substr(slash + 1);
        const auto sub = rest.find('/');
        // support/ is the kinds' shared fixture.
        if (sub == std::string::npos || rest.substr(0, sub) == kind || rest.substr(0, sub) == "support") return "";
        return "an experiment kind includes another kind's folder";
    }
    const auto& allowed = kAllowed.at(layer);
    if (allowed.count(to)) return "";
    return layer + " may not include " + to;
}

std::vector<std::string> violations_in(const fs::path& root) {
    std::vector<std::string> found;
    auto scan = [&](const fs::path& folder, const std::string& layer, bool kinds) {
        for (const auto& entry : fs::recursive_directory_iterator(folder)) {
            const auto ext = entry.path().extension();
            if (!entry.is_regular_file() || (ext != ".h" && ext != ".cpp")) continue;
            std::string kind;
            if (kinds) {
                const auto relative = fs::relative(entry.path(), folder);
                if (std::distance(relative.begin(), relative.end()) > 1) kind = relative.begin()->string();
            }
            for (const auto& inc : project_includes(entry.path()))
                if (const auto why = violation(layer, kind, inc.target); !why.empty())
                    found.push_back(inc.file + ":" + std::to_string(inc.line) + ": #include \"" + inc.target + "\": " + why);
            const bool in_kernels = entry.path().parent_path().filename() == "kernels" ||
                                    entry.path().parent_path().parent_path().filename() == "kernels";
            for (const auto& inc : includes_of(entry.path(), false))
                if (is_intrinsics_header(inc.target) && !in_kernels)
                    found.push_back(inc.file + ":" + std::to_string(inc.line) + ": #include <" + inc.target +
                                    ">: intrinsics belong in a kernels/ folder (one build per family, behind its dispatch)");
        }
    };
    for (const auto& entry : fs::directory_iterator(root / "lib"))
        if (entry.is_directory()) scan(entry.path(), entry.path().filename().string(), false);
    scan(root / "experiments", "experiments", true);
    scan(root / "app", "app", false);
    return found;
}

}  // namespace

TEST_CASE("the rule refuses what it should: upward, sideways and cross-kind includes") {
    CHECK(violation("core", "", "report/table.h") == "core may not include report");
    CHECK(violation("gemm", "", "nn/tensor.h") == "gemm may not include nn");
    CHECK(violation("report", "", "nn/mlp.h") == "report may not include nn");
    CHECK(violation("nn", "", "experiments/support/run.h") == "nn may not include experiments");
    CHECK(violation("experiments", "key_value", "experiments/width_sweep/target.h") ==
          "an experiment kind includes another kind's folder");
    CHECK(violation("experiments", "width_sweep", "experiments/width_sweep/target.h").empty());
    CHECK(violation("experiments", "key_value", "experiments/support/run.h").empty());
    CHECK(violation("experiments", "key_value", "experiments/support/ffn.h").empty());
    CHECK(violation("train", "", "nn/mlp.h").empty());
    CHECK(violation("nn", "", "activation.h").empty());
    CHECK(violation("runner", "", "gemm/gemm.h") == "runner may not include gemm");
    CHECK(is_intrinsics_header("immintrin.h"));
    CHECK(is_intrinsics_header("x86intrin.h"));
    CHECK_FALSE(is_intrinsics_header("vector"));
}

TEST_CASE("includes in angle brackets count when they name a project folder") {
    ffn::test::TempDir dir;
    const fs::path file = dir.path() / "kind.cpp";
    std::ofstream(file) << "#include <gemm/gemm.h>\n#include <vector>\n#include <fmt/format.h>\n#include \"nn/mlp.h\"\n";
    const auto found = project_includes(file);
    REQUIRE(found.size() == 2);
    CHECK(found[0].target == "gemm/gemm.h");
    CHECK(violation("experiments", "key_value", found[0].target) == "experiments may not include gemm");
    CHECK(found[1].target == "nn/mlp.h");
}

TEST_CASE("every include in lib/, experiments/ and app/ follows the layering") {
    const fs::path root = ffn::test::source_path("");
    for (const char* layer : {"core", "io", "gemm", "nn", "train", "analysis", "report", "runner", "bench"})
        REQUIRE_MESSAGE(fs::is_directory(root / "lib" / layer), layer);  // the rule knows every layer there is
    for (const auto& entry : fs::directory_iterator(root / "lib"))
        if (entry.is_directory()) CHECK_MESSAGE(kAllowed.count(entry.path().filename().string()), entry.path().string());
    for (const auto& v : violations_in(root)) FAIL_CHECK(v);
}
