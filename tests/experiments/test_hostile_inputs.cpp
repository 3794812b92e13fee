// "internal error" must be unreachable from input: every reader, fed a
// battery of generated malformed inputs (truncations, byte changes,
// insertions of valid inputs), either accepts the input or throws
// ffn::Error with the bad-input code. Any other exception is what `main`
// would report as an internal error, and fails here.
#include <doctest/doctest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "experiments/registry.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "nn/mlp.h"
#include "nn/weights.h"
#include "report/table_io.h"
#include "runner/config.h"
#include "runner/execute.h"
#include "support.h"

using namespace ffn;

namespace {

// Variants of a valid text: every prefix at 37 cut points, single bytes
// replaced by JSON's structural characters and by extremes, and runs of
// the text duplicated in place. Deterministic (seeded), at least `count`.
std::vector<std::string> mutations(const std::string& valid, std::size_t count) {
    std::vector<std::string> out;
    for (std::size_t k = 1; k <= 37; ++k) out.push_back(valid.substr(0, valid.size() * k / 38));
    const std::string bytes[] = {"{", "}", "[", "]", "\"", ",", ":", "1e999", "-", "0", "\x01", "\xff", "\\", "null", "true"};
    Rng rng(2026);
    while (out.size() < count) {
        std::string s = valid;
        const auto at = static_cast<std::size_t>(rng.uniform(0, static_cast<double>(s.size())));
        const auto& b = bytes[static_cast<std::size_t>(rng.uniform(0, 15)) % 15];
        switch (out.size() % 3) {
            case 0: s.replace(std::min(at, s.size() - 1), 1, b); break;
            case 1: s.insert(at, b); break;
            default: s.insert(at, s.substr(at, std::min<std::size_t>(40, s.size() - at))); break;
        }
        out.push_back(s);
    }
    return out;
}

// Runs `read` on each variant: acceptance or ffn::Error(bad_input) only.
void feed(const std::vector<std::string>& inputs, const std::function<void(const std::string&)>& read) {
    int refused = 0;
    for (const auto& input : inputs) {
        CAPTURE(input.substr(0, 200));
        try {
            read(input);
        } catch (const Error& e) {
            CHECK(e.code() == ExitCode::bad_input);
            ++refused;
        } catch (const std::exception& e) {
            FAIL("not an ffn::Error (\"internal error\" in the app): " << std::string(e.what()));
        }
    }
    CHECK(refused > 0);  // the battery does reach the error paths
}

}  // namespace

TEST_CASE("configs and --set values: 300 malformed variants each give ffn::Error or a result") {
    test::TempDir dir;
    const std::string valid = io::read_file(test::source_path("configs/ablation.json"));
    feed(mutations(valid, 300), [&](const std::string& text) {
        const std::string path = dir.file("c.json");
        io::write_file_atomically(path, text);
        // The ablation runs in microseconds: run what validates, so the
        // run-time checks (matrix shapes...) are fed too.
        runner::execute(runner::make_plan(runner::load_config(path), path, {}, experiments::all_kinds()), {1, {}, {}});
    });
    const std::string width = io::read_file(test::source_path("configs/width_quick.json"));
    feed(mutations(R"({"lr": 0.002, "interval": [-1, 1], "seeds": {"range": [0, 3]}, "zip.d": [1]})", 150),
         [&](const std::string& value) {
             const std::string path = dir.file("w.json");
             io::write_file_atomically(path, width);
             for (const char* key : {"lr", "interval", "seeds", "sweep.model.width", "document", "zip"})
                 runner::make_plan(runner::load_config(path), path, {runner::parse_override(std::string(key) + "=" + value)},
                                   experiments::all_kinds());
         });
}

TEST_CASE("result tables: 300 malformed JSON and 150 malformed CSV variants each give ffn::Error or tables") {
    test::TempDir dir;
    const std::string json = io::read_file(test::source_path("experiments/residual_ablation/expected/ablation.json"));
    feed(mutations(json, 300), [&](const std::string& text) {
        io::write_file_atomically(dir.file("t.json"), text);
        report::read_tables(dir.file("t.json"));
    });
    const std::string csv = "d,m,name,ok,value\n64,256,\"a, \"\"b\"\"\",true,1.5e-3\n16,4,x,false,\n";
    feed(mutations(csv, 150), [&](const std::string& text) {
        io::write_file_atomically(dir.file("t.csv"), text);
        report::read_tables(dir.file("t.csv"));
    });
}

TEST_CASE("safetensors: 300 malformed headers each give ffn::Error or a loaded model") {
    test::TempDir dir;
    nn::MLP<float> mlp({1, 4, 1}, nn::Activation::relu);
    nn::save_weights(dir.file("m.safetensors"), mlp);
    const std::string file = io::read_file(dir.file("m.safetensors"));
    std::uint64_t n = 0;
    for (int b = 7; b >= 0; --b) n = (n << 8) | static_cast<unsigned char>(file[static_cast<std::size_t>(b)]);
    const std::string header = file.substr(8, n), data = file.substr(8 + n);
    feed(mutations(header, 300), [&](const std::string& h) {
        std::string out(8, '\0');
        for (int b = 0; b < 8; ++b) out[static_cast<std::size_t>(b)] = static_cast<char>((h.size() >> (8 * b)) & 0xff);
        io::write_file_atomically(dir.file("bad.safetensors"), out + h + data);
        nn::MLP<float> into({1, 4, 1}, nn::Activation::relu);
        nn::load_weights(dir.file("bad.safetensors"), into);
    });
}
