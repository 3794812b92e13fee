// One MLP layer of a Hugging Face checkpoint, read by its standard names and
// proved against PyTorch's forward of the same module
// (tests/nn/fixtures/make_layer_fixtures.py wrote the checkpoints and
// PyTorch's outputs; these tests need no Python).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "nn/layouts.h"
#include "support.h"

using namespace ffn;

namespace {

std::string fixture(const std::string& name) { return test::source_path("tests/nn/fixtures/layers/" + name); }

template <class T>
nn::Matrix<T> matrix_of(const io::TensorData& t) {
    nn::Matrix<T> m = nn::Matrix<T>::from_shape({t.shape.at(0), t.shape.at(1)});
    const auto v = t.as_doubles();
    for (std::size_t i = 0; i < v.size(); ++i) m.data()[i] = static_cast<T>(v[i]);
    return m;
}

// max |a - b| / max(1, max |b|).
template <class T>
double relative_gap(const nn::Matrix<T>& a, const io::TensorData& b) {
    const auto want = b.as_doubles();
    REQUIRE(want.size() == a.size());
    double gap = 0, scale = 1;
    for (std::size_t i = 0; i < want.size(); ++i) {
        gap = std::max(gap, std::abs(static_cast<double>(a.data()[i]) - want[i]));
        scale = std::max(scale, std::abs(want[i]));
    }
    return gap / scale;
}

// Loads layer 1 of a fixture and compares its forward and its
// pre-activation with PyTorch's.
void check_against_torch(const std::string& name, const std::string& layout, bool gated, nn::Activation act) {
    const io::Checkpoint ckpt = io::Checkpoint::open(fixture(name));
    const nn::LayerSpec spec = nn::find_layer(ckpt, 1);
    CHECK(spec.layout == layout);
    CHECK(spec.gated == gated);
    CHECK(spec.activation == act);
    CHECK(spec.d == 8);
    CHECK(spec.layers == 2);
    const io::SafetensorsFile expected = io::read_safetensors(fixture(name + "/expected.safetensors"));
    // float32: PyTorch and ffn-lab sum the 8- and 32-term dot products in
    // different orders, and compute tanh/erf/exp with different libraries;
    // the outputs are O(1), so each rounding is ~6e-8 and a few dozen of
    // them stay below 2e-6 of the output's scale.
    auto f = nn::load_layer<float>(ckpt, spec);
    const auto X = matrix_of<float>(*expected.find("inputs"));
    CHECK(relative_gap(f.module().forward_with_hook(X), *expected.find("output_f32")) < 2e-6);
    CHECK(relative_gap(f.pre_activation(X), *expected.find("pre_f32")) < 2e-6);
    // hidden() skips the down projection but must give the forward's own
    // hidden values, bit for bit (the lab's units are those).
    nn::Matrix<float> seen;
    f.module().forward_with_hook(X, [&](std::size_t, nn::Matrix<float>& h) { seen = h; });
    const nn::Matrix<float> H = f.hidden(X);
    REQUIRE(H.size() == seen.size());
    CHECK(std::memcmp(H.data(), seen.data(), H.size() * sizeof(float)) == 0);
    // float64: the same weights widened, rounding ~1e-16 a step.
    auto g = nn::load_layer<double>(ckpt, spec);
    CHECK(relative_gap(g.module().forward_with_hook(matrix_of<double>(*expected.find("inputs"))), *expected.find("output_f64")) < 1e-13);
}

// A copy of a fixture folder to damage.
std::string copy_fixture(const test::TempDir& dir, const std::string& name) {
    const std::string to = dir.file(name);
    std::filesystem::copy(fixture(name), to, std::filesystem::copy_options::recursive);
    return to;
}

}  // namespace

TEST_CASE("a GPT-2 layer (Conv1D, gelu_new) in F32, F16 and BF16 computes PyTorch's forward") {
    SUBCASE("F32") { check_against_torch("gpt2_f32", "gpt2", false, nn::Activation::gelu_tanh); }
    SUBCASE("F16") { check_against_torch("gpt2_f16", "gpt2", false, nn::Activation::gelu_tanh); }
    SUBCASE("BF16") { check_against_torch("gpt2_bf16", "gpt2", false, nn::Activation::gelu_tanh); }
}

TEST_CASE("a GPT-NeoX / Pythia layer (exact GELU) in F32, F16 and BF16 computes PyTorch's forward") {
    SUBCASE("F32") { check_against_torch("gpt_neox_f32", "gpt_neox", false, nn::Activation::gelu); }
    SUBCASE("F16") { check_against_torch("gpt_neox_f16", "gpt_neox", false, nn::Activation::gelu); }
    SUBCASE("BF16") { check_against_torch("gpt_neox_bf16", "gpt_neox", false, nn::Activation::gelu); }
}

TEST_CASE("a sharded Llama-style gated layer (SiLU, no biases) in F32, F16 and BF16 computes PyTorch's forward") {
    SUBCASE("F32") { check_against_torch("llama_f32", "llama", true, nn::Activation::silu); }
    SUBCASE("F16") { check_against_torch("llama_f16", "llama", true, nn::Activation::silu); }
    SUBCASE("BF16") { check_against_torch("llama_bf16", "llama", true, nn::Activation::silu); }
}

TEST_CASE("F16 and BF16 widen exactly: normals, subnormals, signed zeros, infinities, NaN") {
    CHECK(io::half_to_float(0x3c00) == 1.0f);
    CHECK(io::half_to_float(0xc000) == -2.0f);
    CHECK(io::half_to_float(0x7bff) == 65504.0f);                   // largest normal
    CHECK(io::half_to_float(0x0400) == std::ldexp(1.0f, -14));      // smallest normal
    CHECK(io::half_to_float(0x0001) == std::ldexp(1.0f, -24));      // smallest subnormal
    CHECK(io::half_to_float(0x03ff) == std::ldexp(1023.0f, -24));   // largest subnormal
    CHECK(io::half_to_float(0x3555) == 0.333251953125f);  // the half nearest 1/3
    CHECK(std::signbit(io::half_to_float(0x8000)));
    CHECK(io::half_to_float(0x8000) == 0.0f);
    CHECK(io::half_to_float(0x7c00) == INFINITY);
    CHECK(io::half_to_float(0xfc00) == -INFINITY);
    CHECK(std::isnan(io::half_to_float(0x7e00)));
    CHECK(std::isnan(io::half_to_float(0x7c01)));  // a signalling payload stays NaN
    CHECK(io::bfloat16_to_float(0x3f80) == 1.0f);
    CHECK(io::bfloat16_to_float(0xc049) == -3.140625f);
    CHECK(io::bfloat16_to_float(0x0001) == std::ldexp(1.0f, -133));  // subnormal
    CHECK(io::bfloat16_to_float(0x7f7f) == std::ldexp(255.0f, 120));  // largest finite
    CHECK(std::signbit(io::bfloat16_to_float(0x8000)));
    CHECK(io::bfloat16_to_float(0xff80) == -INFINITY);
    CHECK(std::isnan(io::bfloat16_to_float(0x7fc0)));
    // Over every non-NaN pattern, from -inf up through -0, +0 to +inf, the
    // widened values increase strictly: no two halves become one float.
    float previous = -INFINITY;
    for (std::uint32_t b = 0xfbff; b > 0x8000; --b) {
        const float v = io::half_to_float(static_cast<std::uint16_t>(b));
        CHECK_MESSAGE(v > previous, b);
        previous = v;
    }
    for (std::uint32_t b = 0; b <= 0x7c00; ++b) {
        const float v = io::half_to_float(static_cast<std::uint16_t>(b));
        if (b > 0) CHECK_MESSAGE(v > previous, b);
        previous = v;
    }
}

TEST_CASE("a layer's loading reads its own tensors, and names a missing or out-of-range layer") {
    const io::Checkpoint ckpt = io::Checkpoint::open(fixture("gpt2_f32"));
    CHECK_THROWS_WITH(nn::find_layer(ckpt, std::nullopt), doctest::Contains("holds 2 MLP layers (0-1); name one"));
    CHECK_THROWS_WITH(nn::find_layer(ckpt, 12), doctest::Contains("layer 12: the checkpoint has layers 0-1"));
    CHECK_THROWS_WITH(nn::find_layer(ckpt, 1, std::string("llama")), doctest::Contains("layout 'llama' names no tensor here"));
    CHECK(nn::find_layer(ckpt, 0, std::string("gpt2")).layer == 0);
    const auto names = nn::layer_tensor_names(ckpt, nn::find_layer(ckpt, 1));
    REQUIRE(names.size() == 4);
    CHECK(names[0] == std::pair<std::string, std::string>{"up.weight", "h.1.mlp.c_fc.weight"});
    CHECK(names[3] == std::pair<std::string, std::string>{"down.bias", "h.1.mlp.c_proj.bias"});
}

TEST_CASE("a sharded checkpoint refuses a shard outside its folder and a tensor its shard lacks") {
    test::TempDir dir;
    const std::string folder = copy_fixture(dir, "llama_f32");
    const std::string index = folder + "/model.safetensors.index.json";
    const std::string good = io::read_file(index);
    const auto with_index = [&](const std::string& from, const std::string& to) {
        std::string text = good;
        const auto at = text.find(from);
        REQUIRE(at != std::string::npos);
        text.replace(at, from.size(), to);
        io::write_file_atomically(index, text);
    };
    with_index("\"layers.1.mlp.up_proj.weight\": \"model-00002-of-00002.safetensors\"",
               "\"layers.1.mlp.up_proj.weight\": \"../model-00002-of-00002.safetensors\"");
    CHECK_THROWS_WITH(io::Checkpoint::open(folder), doctest::Contains("is mapped to shard '../model-00002-of-00002.safetensors', which is not a file name in the checkpoint's folder"));
    with_index("\"layers.1.mlp.up_proj.weight\": \"model-00002-of-00002.safetensors\"",
               "\"layers.1.mlp.up_proj.weight\": \"/etc/passwd\"");
    CHECK_THROWS_WITH(io::Checkpoint::open(folder), doctest::Contains("not a file name in the checkpoint's folder"));
    // The index maps layer 1's up to the first shard, which does not hold it.
    with_index("\"layers.1.mlp.up_proj.weight\": \"model-00002-of-00002.safetensors\"",
               "\"layers.1.mlp.up_proj.weight\": \"model-00001-of-00002.safetensors\"");
    const io::Checkpoint ckpt = io::Checkpoint::open(folder);
    CHECK_THROWS_WITH(nn::find_layer(ckpt, 1), doctest::Contains("no tensor 'layers.1.mlp.up_proj.weight', though model.safetensors.index.json maps it to this shard"));
    CHECK(nn::find_layer(ckpt, 0).hidden == 24);  // layer 0 is whole and loads
    with_index("\"layers.1.mlp.up_proj.weight\": \"model-00002-of-00002.safetensors\"",
               "\"layers.1.mlp.up_proj.weight\": \"model-00003-of-00002.safetensors\"");
    CHECK_THROWS_WITH(nn::find_layer(io::Checkpoint::open(folder), 1), doctest::Contains("no such shard"));
}

TEST_CASE("config.json's activation is read, and one ffn-lab does not compute is refused") {
    test::TempDir dir;
    const std::string folder = copy_fixture(dir, "gpt_neox_f16");
    io::write_file_atomically(folder + "/config.json", R"({"hidden_act": "relu"})");
    CHECK(nn::find_layer(io::Checkpoint::open(folder), 1).activation == nn::Activation::relu);
    io::write_file_atomically(folder + "/config.json", R"({"hidden_act": "quick_gelu"})");
    CHECK_THROWS_WITH(nn::find_layer(io::Checkpoint::open(folder), 1),
                      doctest::Contains("config.json: hidden_act \"quick_gelu\" is not an activation ffn-lab computes"));
    std::filesystem::remove(folder + "/config.json");  // then the layout's own: exact GELU
    CHECK(nn::find_layer(io::Checkpoint::open(folder), 1).activation == nn::Activation::gelu);
}

TEST_CASE("config.json's sizes must be the weights', and a quantization_config is refused") {
    test::TempDir dir;
    const std::string neox = copy_fixture(dir, "gpt_neox_f32"), gpt2 = copy_fixture(dir, "gpt2_f32");
    const auto spec_of = [](const std::string& folder, const std::string& config) {
        io::write_file_atomically(folder + "/config.json", config);
        return nn::find_layer(io::Checkpoint::open(folder), 1);
    };
    const std::size_t hidden = nn::find_layer(io::Checkpoint::open(neox), 1).hidden;
    CHECK(spec_of(neox, fmt::format(R"({{"hidden_size": 8, "intermediate_size": {}, "num_hidden_layers": 2}})", hidden)).d == 8);
    CHECK(spec_of(neox, R"({"hidden_size": 8, "num_hidden_layers": 7})").d == 8);  // a file may hold fewer blocks than the model
    CHECK_THROWS_WITH(spec_of(neox, R"({"hidden_size": 4096})"),
                      doctest::Contains("config.json: hidden_size is 4096, but the weights are 8 wide; the config is not this checkpoint's"));
    CHECK_THROWS_WITH(spec_of(neox, fmt::format(R"({{"intermediate_size": {}}})", hidden + 1)),
                      doctest::Contains(fmt::format("intermediate_size is {}, but the weights have {} hidden units", hidden + 1, hidden).c_str()));
    CHECK_THROWS_WITH(spec_of(neox, R"({"num_hidden_layers": 1})"), doctest::Contains("num_hidden_layers is 1, but the weights hold 2 blocks"));
    // A size per block (Gemma-3n's intermediate_size): the block's own.
    CHECK(spec_of(neox, fmt::format(R"({{"intermediate_size": [1, {}]}})", hidden)).hidden == hidden);
    CHECK_THROWS_WITH(spec_of(neox, fmt::format(R"({{"intermediate_size": [{}, 1]}})", hidden)),
                      doctest::Contains("intermediate_size is 1, but the weights have"));
    CHECK_THROWS_WITH(spec_of(neox, R"({"hidden_size": "8"})"), doctest::Contains("config.json: hidden_size is \"8\", not a size"));
    CHECK_THROWS_WITH(spec_of(neox, R"({"quantization_config": {"quant_method": "gptq", "bits": 4}})"),
                      doctest::Contains("config.json: a quantization_config (gptq)"));
    // GPT-2's n_inner, absent or null, is 4 n_embd (the fixtures' 32).
    CHECK(spec_of(gpt2, R"({"n_embd": 8, "n_inner": null, "n_layer": 2})").hidden == 32);
    CHECK_THROWS_WITH(spec_of(gpt2, R"({"n_embd": 8, "n_inner": 64})"), doctest::Contains("n_inner is 64, but the weights have 32 hidden units"));
}

TEST_CASE("shapes that disagree, NaN weights and quantised tensors are refused by name") {
    test::TempDir dir;
    const auto write = [&](const std::string& name, const std::vector<io::TensorData>& tensors) {
        io::SafetensorsFile f;
        f.tensors = tensors;
        io::write_safetensors(dir.file(name), f);
        return io::Checkpoint::open(dir.file(name));
    };
    const std::vector<float> v(4 * 3, 0.5f), nan_v = [] { std::vector<float> x(4 * 3, 0.5f); x[5] = NAN; return x; }();
    const auto llama = [&](std::size_t up_rows, const std::vector<float>& up_values) {
        return std::vector<io::TensorData>{io::make_tensor<float>("model.layers.0.mlp.gate_proj.weight", {4, 3}, v.data()),
                                           io::make_tensor<float>("model.layers.0.mlp.up_proj.weight", {up_rows, 3}, up_values.data()),
                                           io::make_tensor<float>("model.layers.0.mlp.down_proj.weight", {3, 4}, v.data())};
    };
    const auto ok = write("ok.safetensors", llama(4, v));
    const auto spec = nn::find_layer(ok, std::nullopt);  // one layer: no index needed
    CHECK(spec.hidden == 4);
    CHECK_FALSE(spec.biases);
    CHECK_THROWS_WITH(nn::find_layer(write("shapes.safetensors", llama(3, v)), 0),
                      doctest::Contains("layer 0's shapes disagree: gate_proj [4, 3], up_proj [3, 3], down_proj [3, 4]"));
    const auto bad = write("nan.safetensors", llama(4, nan_v));
    CHECK_THROWS_WITH(nn::load_layer<float>(bad, nn::find_layer(bad, 0)),
                      doctest::Contains("tensor 'model.layers.0.mlp.up_proj.weight' element 5 is NaN"));
    // GPTQ/AWQ-style names, and an I8 tensor under the usual name.
    io::SafetensorsFile q;
    q.tensors = {io::make_tensor<float>("model.layers.0.mlp.up_proj.qweight", {4, 3}, v.data())};
    io::write_safetensors(dir.file("gptq.safetensors"), q);
    CHECK_THROWS_WITH(nn::find_layer(io::Checkpoint::open(dir.file("gptq.safetensors")), 0), doctest::Contains("a quantised checkpoint"));
    std::string header = R"({"layers.0.mlp.gate_proj.weight":{"dtype":"I8","shape":[4,3],"data_offsets":[0,12]},)"
                         R"("layers.0.mlp.up_proj.weight":{"dtype":"I8","shape":[4,3],"data_offsets":[12,24]},)"
                         R"("layers.0.mlp.down_proj.weight":{"dtype":"I8","shape":[3,4],"data_offsets":[24,36]}})";
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string bytes(8, '\0');
    for (int b = 0; b < 8; ++b) bytes[static_cast<std::size_t>(b)] = static_cast<char>((header.size() >> (8 * b)) & 0xff);
    io::write_file_atomically(dir.file("i8.safetensors"), bytes + header + std::string(36, '\1'));
    const auto i8 = io::Checkpoint::open(dir.file("i8.safetensors"));
    CHECK_THROWS_WITH(nn::load_layer<float>(i8, nn::find_layer(i8, 0)), doctest::Contains("dtype I8 is a quantised format"));
}

TEST_CASE("the layout is found from the names - names that fit two layouts ask for one") {
    test::TempDir dir;
    const std::vector<float> v(12, 0.25f);
    io::SafetensorsFile f;
    f.tensors = {io::make_tensor<float>("h.0.mlp.c_fc.weight", {3, 4}, v.data()), io::make_tensor<float>("h.0.mlp.c_fc.bias", {4}, v.data()),
                 io::make_tensor<float>("h.0.mlp.c_proj.weight", {4, 3}, v.data()), io::make_tensor<float>("h.0.mlp.c_proj.bias", {3}, v.data()),
                 io::make_tensor<float>("transformer.h.0.mlp.c_fc.weight", {3, 4}, v.data())};
    io::write_safetensors(dir.file("two.safetensors"), f);
    CHECK_THROWS_WITH(nn::find_layer(io::Checkpoint::open(dir.file("two.safetensors")), 0),
                      doctest::Contains("fit more than one layout: gpt2 (transformer.h.N.mlp), gpt2 (h.N.mlp)"));
    f.tensors.pop_back();
    f.tensors.pop_back();  // no c_proj.bias
    io::write_safetensors(dir.file("nobias.safetensors"), f);
    CHECK_THROWS_WITH(nn::find_layer(io::Checkpoint::open(dir.file("nobias.safetensors")), 0), doctest::Contains("lacks a bias of c_fc/c_proj"));
    io::SafetensorsFile other;
    other.tensors = {io::make_tensor<float>("encoder.fc1.weight", {3, 4}, v.data())};
    io::write_safetensors(dir.file("other.safetensors"), other);
    CHECK_THROWS_WITH(nn::find_layer(io::Checkpoint::open(dir.file("other.safetensors")), 0), doctest::Contains("no MLP layer of a known layout"));
}
