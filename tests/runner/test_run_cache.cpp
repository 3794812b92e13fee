// runner::RunCache: a run's tables come back exactly as stored (NaN and
// the infinities included, which results files write as null), only for
// the same run, and a damaged entry is no entry. The resume behaviour of
// a whole sweep is tests/cli/resume.sh.
#include <doctest/doctest.h>

#include <unistd.h>

#include <bit>
#include <cmath>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <limits>

#include "report/table_io.h"
#include "runner/execute.h"
#include "runner/run_cache.h"
#include "support.h"
#include "toy_kind.h"

using namespace ffn::runner;
namespace fs = std::filesystem;

namespace {

Plan toy_plan(const char* json) {
    static const std::vector<ExperimentKind> kinds = {ffn::test::toy_kind()};
    return make_plan(Json::parse(json), "cfg.json", {}, kinds);
}

// Under a folder of this process's own: the same test of two build trees
// running at once must not remove or chmod each other's folders.
fs::path fresh_folder(const char* name) {
    static const ffn::test::TempDir root;
    const fs::path dir = root.path() / name;
    fs::remove_all(dir);
    return dir;
}

}  // namespace

TEST_CASE("RunCache: tables come back bit for bit, NaN and infinities included") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [3]})");
    const RunCache cache(fresh_folder("ffnlab_run_cache_bits").string());
    ffn::report::Table t("result");
    t.add_column("x", ffn::report::ColumnType::real).add_column("n", ffn::report::ColumnType::integer);
    t.add_column("s", ffn::report::ColumnType::text).add_column("b", ffn::report::ColumnType::boolean);
    t.add_key("n");
    const double inf = std::numeric_limits<double>::infinity();
    const std::vector<double> xs = {0.1, -0.0, std::numeric_limits<double>::quiet_NaN(), inf, -inf, 5e-324, 1.0 / 3};
    for (std::size_t i = 0; i < xs.size(); ++i)
        t.add_row({xs[i], static_cast<std::int64_t>(i), std::string("run ") + std::to_string(i), i % 2 == 0});
    t.add_row({ffn::report::Cell{}, std::int64_t{-7}, ffn::report::Cell{}, ffn::report::Cell{}});
    REQUIRE(cache.store(cache.key("toy", plan.runs[0]), "toy", plan.runs[0], {t}));
    const auto back = cache.load("toy", plan.runs[0]);
    REQUIRE(back);
    REQUIRE(back->size() == 1);
    const auto& u = back->front();
    CHECK(u.keys() == t.keys());
    REQUIRE(u.row_count() == t.row_count());
    for (std::size_t i = 0; i < xs.size(); ++i) {
        const double got = std::get<double>(u.at(i, "x"));
        CHECK(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(std::isnan(xs[i]) ? got : xs[i]));
        if (std::isnan(xs[i])) CHECK(std::isnan(got));
        CHECK(u.at(i, "s") == t.at(i, "s"));
        CHECK(u.at(i, "b") == t.at(i, "b"));
    }
    CHECK(ffn::report::is_null(u.at(xs.size(), "x")));
    CHECK(ffn::report::results_document("toy", {u}, nullptr) == ffn::report::results_document("toy", {t}, nullptr));
}

namespace {

ffn::report::Table one_number(double x) {
    ffn::report::Table t("result");
    t.add_column("x", ffn::report::ColumnType::real);
    t.add_row({x});
    return t;
}

// The folder's segment files (the store keeps a few, never one per run).
std::vector<fs::path> segments(const fs::path& dir) {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir))
        if (is_entry_name(e.path().filename().string())) out.push_back(e.path());
    return out;
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary | std::ios::trunc) << text; }

// Runs the body with the cache's secret at `key_file`, restoring the
// environment however the body ends.
struct KeyFile {
    explicit KeyFile(const fs::path& path) : before_(std::getenv("FFNLAB_CACHE_KEY") ? std::getenv("FFNLAB_CACHE_KEY") : "") {
        ::setenv("FFNLAB_CACHE_KEY", path.c_str(), 1);
    }
    ~KeyFile() {
        if (before_.empty()) ::unsetenv("FFNLAB_CACHE_KEY");
        else ::setenv("FFNLAB_CACHE_KEY", before_.c_str(), 1);
    }
    std::string before_;
};

}  // namespace

TEST_CASE("RunCache: another run, another kind or a damaged line finds no entry") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1]})");
    const Plan other_lr = toy_plan(R"({"experiment": "toy", "lr": 2, "seeds": [0, 1]})");
    const fs::path dir = fresh_folder("ffnlab_run_cache_keys");
    {
        const RunCache cache(dir.string());
        REQUIRE(cache.store(cache.key("toy", plan.runs[0]), "toy", plan.runs[0], {one_number(1.5)}));
        REQUIRE(cache.store(cache.key("toy", other_lr.runs[0]), "toy", other_lr.runs[0], {one_number(2.5)}));
        CHECK(cache.key("toy", plan.runs[0]) != cache.key("toy", other_lr.runs[0]));
    }
    const RunCache cache(dir.string());
    CHECK(cache.entries() == 2);
    CHECK(cache.load("toy", plan.runs[0]));
    CHECK_FALSE(cache.load("toy", plan.runs[1]));    // another seed
    CHECK_FALSE(cache.load("other", plan.runs[0]));  // another kind
    CHECK(cache.rejected() == 0);
    REQUIRE(segments(dir).size() == 1);
    // A kill mid-write leaves a torn last line: the entries before it hold.
    const fs::path seg = segments(dir).front();
    const std::string text = read_all(seg);
    write_all(seg, text.substr(0, text.size() - 7));
    const RunCache torn(dir.string());
    CHECK(torn.load("toy", plan.runs[0]));
    CHECK_FALSE(torn.load("toy", other_lr.runs[0]));
    CHECK(torn.rejected() == 0);
}

// The cache's trust model: an entry is used only when its HMAC, under the
// user's secret, covers its key, its tables and their schemas.
TEST_CASE("RunCache: an edited entry, another run's entry under this key, or another user's entry is rejected") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1]})");
    const fs::path dir = fresh_folder("ffnlab_run_cache_forged");
    const KeyFile secret(fresh_folder("ffnlab_run_cache_forged_key"));
    std::string key0, key1;
    {
        const RunCache cache(dir.string());
        key0 = cache.key("toy", plan.runs[0]);
        key1 = cache.key("toy", plan.runs[1]);
        REQUIRE(cache.store(key0, "toy", plan.runs[0], {one_number(1.5)}));
        REQUIRE(cache.store(key1, "toy", plan.runs[1], {one_number(2.5)}));
    }
    const fs::path seg = segments(dir).front();
    const std::string original = read_all(seg);
    // The number edited, the MAC left: rejected, and counted.
    std::string edited = original;
    edited.replace(edited.find("1.5"), 3, "9.5");
    write_all(seg, edited);
    {
        const RunCache cache(dir.string());
        CHECK_FALSE(cache.load("toy", plan.runs[0]));
        CHECK(cache.rejected() == 1);
        CHECK(cache.load("toy", plan.runs[1]));  // the other entry is intact
    }
    // Run 1's line filed under run 0's key (its MAC covers its own key).
    std::string swapped = original;
    const std::size_t line0 = swapped.find("E " + key0), line1 = swapped.find("E " + key1);
    swapped.replace(line1 + 2, 16, key0);
    swapped.erase(line0, swapped.find('\n', line0) - line0 + 1);
    write_all(seg, swapped);
    {
        const RunCache cache(dir.string());
        CHECK_FALSE(cache.load("toy", plan.runs[0]));
        CHECK(cache.rejected() == 1);
    }
    // Intact entries under another user's secret: rejected.
    write_all(seg, original);
    {
        const KeyFile other(fresh_folder("ffnlab_run_cache_other_key"));
        const RunCache cache(dir.string());
        CHECK_FALSE(cache.load("toy", plan.runs[0]));
        CHECK(cache.rejected() == 1);
    }
    const RunCache cache(dir.string());
    CHECK(cache.load("toy", plan.runs[0]));
    CHECK(cache.rejected() == 0);
}

TEST_CASE("RunCache: the secret is made once with mode 0600, and one others can read is refused") {
    const fs::path key = fresh_folder("ffnlab_run_cache_mode") / "cache-key";
    const KeyFile secret(key);
    { const RunCache cache(fresh_folder("ffnlab_run_cache_mode_dir").string()); }
    REQUIRE(fs::exists(key));
    CHECK(fs::file_size(key) == 32);
    CHECK((fs::status(key).permissions() & (fs::perms::group_all | fs::perms::others_all)) == fs::perms::none);
    fs::permissions(key, fs::perms::group_read | fs::perms::others_read, fs::perm_options::add);
    CHECK_THROWS_WITH(RunCache(fresh_folder("ffnlab_run_cache_mode_dir").string()), doctest::Contains("readable by others (mode 644)"));
}

TEST_CASE("RunCache: a key someone else owns, or in a folder others may write, is refused - and no HOME, no key") {
    const fs::path folder = fresh_folder("ffnlab_run_cache_owner");
    const fs::path key = folder / "cache-key";
    const KeyFile secret(key);
    { const RunCache cache(fresh_folder("ffnlab_run_cache_owner_dir").string()); }
    REQUIRE(fs::exists(key));
    fs::permissions(folder, fs::perms::group_write | fs::perms::others_write, fs::perm_options::add);
    CHECK_THROWS_WITH(RunCache(fresh_folder("ffnlab_run_cache_owner_dir").string()), doctest::Contains("is writable by others (mode 7"));
    fs::permissions(folder, fs::perms::group_write | fs::perms::others_write, fs::perm_options::remove);
    // Group-writable by the user's own group (umask 002's private groups): the user's.
    fs::permissions(folder, fs::perms::group_write, fs::perm_options::add);
    CHECK_NOTHROW(RunCache(fresh_folder("ffnlab_run_cache_owner_dir").string()));
    fs::permissions(folder, fs::perms::group_write, fs::perm_options::remove);
    // Another user's key: only root can make one here (CI runs as root).
    if (::geteuid() == 0) {
        REQUIRE(::chown(key.c_str(), 65534, 65534) == 0);
        CHECK_THROWS_WITH(RunCache(fresh_folder("ffnlab_run_cache_owner_dir").string()), doctest::Contains("owned by user 65534, not by this user (0)"));
        // Group-writable by a group that is not the user's.
        REQUIRE(::chown(key.c_str(), 0, 0) == 0);
        REQUIRE(::chown(folder.c_str(), 0, 65534) == 0);
        fs::permissions(folder, fs::perms::group_write, fs::perm_options::add);
        CHECK_THROWS_WITH(RunCache(fresh_folder("ffnlab_run_cache_owner_dir").string()), doctest::Contains("is writable by others (mode 7"));
        fs::permissions(folder, fs::perms::group_write, fs::perm_options::remove);
        REQUIRE(::chown(folder.c_str(), 65534, 65534) == 0);
        CHECK_THROWS_WITH(RunCache(fresh_folder("ffnlab_run_cache_owner_dir").string()), doctest::Contains("key's folder"));
        REQUIRE(::chown(folder.c_str(), 0, 0) == 0);
    } else {
        MESSAGE("not root: the other-owner cases need chown and are left to CI");
    }
    // No key named, no XDG_CONFIG_HOME and no HOME: refused, never /tmp.
    const std::string home = std::getenv("HOME") ? std::getenv("HOME") : "", xdg = std::getenv("XDG_CONFIG_HOME") ? std::getenv("XDG_CONFIG_HOME") : "";
    ::unsetenv("FFNLAB_CACHE_KEY");
    ::unsetenv("XDG_CONFIG_HOME");
    ::unsetenv("HOME");
    CHECK_THROWS_WITH(cache_key_path(), doctest::Contains("HOME is not set"));
    if (!home.empty()) ::setenv("HOME", home.c_str(), 1);
    if (!xdg.empty()) ::setenv("XDG_CONFIG_HOME", xdg.c_str(), 1);
}

TEST_CASE("execute with a cache: a forged entry is computed again and the manifest counts it") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1, 2]})");
    const std::string dir = fresh_folder("ffnlab_run_cache_execute_forged").string();
    const auto first = execute(plan, {.threads = 1, .cache = dir});
    const fs::path seg = segments(dir).front();
    std::string text = read_all(seg);
    // One entry's MAC damaged: its first hex digit changed.
    const std::size_t mac = text.find("E ") + 19;
    text[mac] = text[mac] == '0' ? '1' : '0';
    write_all(seg, text);
    const auto second = execute(plan, {.threads = 1, .cache = dir});
    CHECK(second.manifest["runs_rejected"] == 1);
    CHECK(second.manifest["runs_reused"] == 2);
    CHECK(second.manifest["runs_computed"] == 1);
    const auto dump = [](const SweepResult& r) { return ffn::report::results_document("toy", r.tables, nullptr).dump(); };
    CHECK(dump(first) == dump(second));
}

TEST_CASE("execute with a cache: a second run reuses every run and gives the same tables") {
    const Plan plan = toy_plan(R"({"experiment": "toy", "lr": 1, "seeds": [0, 1, 2], "sweep": {"model.width": [1, 2]}})");
    const std::string dir = fresh_folder("ffnlab_run_cache_execute").string();
    const auto first = execute(plan, {.threads = 2, .cache = dir});
    const auto second = execute(plan, {.threads = 1, .cache = dir});
    const auto fresh = execute(plan, {.threads = 1, .cache = dir, .fresh = true});
    CHECK(first.manifest["runs_reused"] == 0);
    CHECK(first.manifest["runs_computed"] == 6);
    CHECK(second.manifest["runs_reused"] == 6);
    CHECK(fresh.manifest["runs_reused"] == 0);
    const auto dump = [](const SweepResult& r) { return ffn::report::results_document("toy", r.tables, nullptr).dump(); };
    CHECK(dump(first) == dump(second));
    CHECK(dump(first) == dump(fresh));
    // A run that writes artifacts is never reused: a reused run writes no files.
    const auto with_files = execute(plan, {.threads = 1, .artifacts = fresh_folder("ffnlab_run_cache_files").string(), .cache = dir});
    CHECK(with_files.manifest["runs_reused"] == 0);
}

// A run's tables are filed under the weights file's bytes as the run read
// them: a file rewritten while the run trains (here, by the run itself) is
// another input, so the next sweep computes again instead of reusing
// tables that came from the old bytes.
TEST_CASE("execute with a cache: a weights file rewritten during the run is not filed under its new bytes") {
    const fs::path weights = fresh_folder("ffnlab_run_cache_weights.bin");
    { std::ofstream(weights) << "first bytes"; }
    ffn::runner::Schema schema{{"weights", KeyType::string, "", {}, {}, {}, "a file the run reads"}};
    auto run = [](const Run& r) {
        std::ifstream in(r.string("weights"));
        const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        std::ofstream(r.string("weights")) << "other bytes, written while the run trains";
        ffn::report::Table t("result");
        t.add_column("bytes", ffn::report::ColumnType::integer);
        t.add_row({static_cast<std::int64_t>(bytes.size())});
        return std::vector<ffn::report::Table>{t};
    };
    static const std::vector<ExperimentKind> kinds = {{.name = "reader", .description = "reads a file", .schema = schema, .run = run}};
    Json config = Json::parse(R"({"experiment": "reader", "seeds": [0]})");
    config["weights"] = weights.string();
    const Plan plan = make_plan(config, "cfg.json", {}, kinds);
    const std::string dir = fresh_folder("ffnlab_run_cache_weights_cache").string();
    const auto first = execute(plan, {.threads = 1, .cache = dir});
    const auto second = execute(plan, {.threads = 1, .cache = dir});
    CHECK(first.manifest["runs_computed"] == 1);
    CHECK(second.manifest["runs_reused"] == 0);  // the file now holds other bytes
    CHECK(second.manifest["runs_computed"] == 1);
}

// The inputs file and a checkpoint folder are inputs too: other bytes in
// either, under the same paths, are another run.
TEST_CASE("execute with a cache: an inputs file or a file of a weights folder with other bytes is another run") {
    const fs::path folder = fresh_folder("ffnlab_run_cache_checkpoint");
    fs::create_directories(folder);
    const fs::path inputs = fresh_folder("ffnlab_run_cache_inputs.bin");
    { std::ofstream(folder / "model.safetensors") << "weights v1"; }
    { std::ofstream(inputs) << "inputs v1"; }
    ffn::runner::Schema schema{{"weights", KeyType::string, "", {}, {}, {}, "a folder the run reads"},
                               {"inputs", KeyType::string, "", {}, {}, {}, "a file the run reads"}};
    auto run = [](const Run&) {
        ffn::report::Table t("result");
        t.add_column("x", ffn::report::ColumnType::integer);
        t.add_row({std::int64_t{1}});
        return std::vector<ffn::report::Table>{t};
    };
    static const std::vector<ExperimentKind> kinds = {{.name = "reader", .description = "reads files", .schema = schema, .run = run}};
    Json config = Json::parse(R"({"experiment": "reader", "seeds": [0]})");
    config["weights"] = folder.string();
    config["inputs"] = inputs.string();
    const Plan plan = make_plan(config, "cfg.json", {}, kinds);
    const std::string dir = fresh_folder("ffnlab_run_cache_inputs_cache").string();
    CHECK(execute(plan, {.threads = 1, .cache = dir}).manifest["runs_computed"] == 1);
    CHECK(execute(plan, {.threads = 1, .cache = dir}).manifest["runs_reused"] == 1);  // nothing changed
    { std::ofstream(inputs) << "inputs v2"; }
    CHECK(execute(plan, {.threads = 1, .cache = dir}).manifest["runs_computed"] == 1);
    { std::ofstream(folder / "model.safetensors") << "weights v2"; }
    CHECK(execute(plan, {.threads = 1, .cache = dir}).manifest["runs_computed"] == 1);
    CHECK(execute(plan, {.threads = 1, .cache = dir}).manifest["runs_reused"] == 1);
}
