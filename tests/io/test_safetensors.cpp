#include <doctest/doctest.h>

#include <cstring>
#include <fstream>
#include <limits>

#include "core/error.h"
#include "io/atomic_file.h"
#include "io/safetensors.h"
#include "nn/mlp.h"
#include "nn/weights.h"
#include "support.h"

using namespace ffn;

namespace {

std::string fixture() { return test::source_path("tests/io/fixtures/fixture.safetensors"); }

// Rewrites a valid file with its header replaced (length recomputed).
std::string with_header(const test::TempDir& dir, const std::string& header_json, std::size_t data_bytes) {
    std::string header = header_json;
    header.append((8 - header.size() % 8) % 8, ' ');
    std::string out(8, '\0');
    for (int b = 0; b < 8; ++b) out[static_cast<std::size_t>(b)] = static_cast<char>((header.size() >> (8 * b)) & 0xff);
    out += header + std::string(data_bytes, '\0');
    const std::string path = dir.file("corrupt.safetensors");
    io::write_file_atomically(path, out);
    return path;
}

}  // namespace

TEST_CASE("the independently written fixture reads back with its values and metadata") {
    const auto file = io::read_safetensors(fixture());
    REQUIRE(file.tensors.size() == 4);
    CHECK(file.metadata.at("made_by") == "make_fixture.py");
    const auto* w = file.find("0.weight");
    REQUIRE(w);
    CHECK(w->dtype == io::DType::F32);
    CHECK(w->shape == std::vector<std::size_t>{4, 1});
    CHECK(w->as_doubles() == std::vector<double>{1.0, -1.0, 0.5, -0.25});
    CHECK(file.find("2.bias")->dtype == io::DType::F64);
    CHECK(file.find("2.bias")->as_doubles()[0] == 0.1);  // float64 kept exactly
}

TEST_CASE("a model loads PyTorch nn.Sequential names through a mapping and saves back bitwise") {
    nn::MLP<double> mlp({1, 4, 1}, nn::Activation::relu);
    nn::load_weights(fixture(), mlp,
                     {{"up.weight", "0.weight"}, {"up.bias", "0.bias"}, {"down.weight", "2.weight"}, {"down.bias", "2.bias"}});
    CHECK(mlp.layers[0].weight(3, 0) == -0.25);
    CHECK(mlp.layers[1].weight(0, 2) == -2.0);
    CHECK(mlp.layers[1].bias(0) == 0.1);

    test::TempDir dir;
    nn::save_weights(dir.file("m.safetensors"), mlp, {{"note", "round trip"}});
    nn::MLP<double> again({1, 4, 1}, nn::Activation::relu);
    nn::load_weights(dir.file("m.safetensors"), again);
    auto a = mlp.parameters(), b = again.parameters();
    for (std::size_t k = 0; k < a.size(); ++k) CHECK(std::memcmp(a[k].value, b[k].value, a[k].size() * sizeof(double)) == 0);
    CHECK(io::read_safetensors(dir.file("m.safetensors")).metadata.at("note") == "round trip");
}

TEST_CASE("load_weights names the missing tensor or the wrong shape") {
    nn::MLP<float> mlp({1, 4, 1}, nn::Activation::relu);
    CHECK_THROWS_WITH(nn::load_weights(fixture(), mlp), doctest::Contains("no tensor 'up.weight'"));
    nn::MLP<float> wide({1, 5, 1}, nn::Activation::relu);
    CHECK_THROWS_WITH(nn::load_weights(fixture(), wide, {{"up.weight", "0.weight"}}),
                      doctest::Contains("tensor '0.weight' has shape [4, 1], the model needs [5, 1]"));
}

TEST_CASE("every corrupt header is a clear error naming the defect") {
    test::TempDir dir;
    auto error_of = [&](const std::string& header, std::size_t data) {
        try {
            io::read_safetensors(with_header(dir, header, data));
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("(no error)");
    };
    auto contains = [](const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; };
    CHECK(contains(error_of(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 8), "(no error)"));
    CHECK(contains(error_of(R"({"a": {"dtype": "F99", "shape": [2], "data_offsets": [0, 8]}})", 8), "unknown dtype 'F99'"));
    CHECK(contains(error_of(R"({"a": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})", 4), "(no error)"));
    CHECK(contains(error_of(R"({"a": {"dtype": "I8", "shape": [2], "data_offsets": [0, 2]}})", 2), "dtype I8 is a quantised format"));
    CHECK(contains(error_of(R"({"a": {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]}})", 8), "dtype I32 is not one ffn-lab reads"));
    CHECK(contains(error_of(R"({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}})", 8), "shape needs 12 bytes"));
    CHECK(contains(error_of(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 16]}})", 8), "outside the data section"));
    CHECK(contains(error_of(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                               "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})", 12), "overlap"));
    CHECK(contains(error_of(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]}})", 16), "gap at byte 0"));
    CHECK(contains(error_of(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", 12), "4 unused bytes"));
    CHECK(contains(error_of(R"({"a": {"dtype": "F32", "shape": [-2], "data_offsets": [0, 8]}})", 8), "not a size"));
    CHECK(contains(error_of(R"({"__metadata__": {"k": 1}})", 0), "__metadata__ value for 'k' is not a string"));
    CHECK(contains(error_of(R"([1, 2])", 0), "header is not a JSON object"));
    CHECK(contains(error_of(R"({"a": )", 0), "safetensors header:1:"));
    CHECK(contains(error_of(R"({"a": )", 0), "invalid JSON: syntax error"));

    io::write_file_atomically(dir.file("short.safetensors"), "abc");
    CHECK_THROWS_WITH(io::read_safetensors(dir.file("short.safetensors")), doctest::Contains("shorter than the 8-byte"));
    io::write_file_atomically(dir.file("long.safetensors"), std::string("\x10\x00\x00\x00\x00\x00\x00\x00{}", 10));
    CHECK_THROWS_WITH(io::read_safetensors(dir.file("long.safetensors")), doctest::Contains("runs past the end"));
}

TEST_CASE("load_weights refuses NaN, infinite and out-of-range weights, naming the tensor and element") {
    test::TempDir dir;
    nn::MLP<double> mlp({1, 4, 1}, nn::Activation::relu);
    mlp.layers[0].weight(2, 0) = std::numeric_limits<double>::quiet_NaN();
    nn::save_weights(dir.file("nan.safetensors"), mlp);
    nn::MLP<double> into({1, 4, 1}, nn::Activation::relu);
    CHECK_THROWS_WITH(nn::load_weights(dir.file("nan.safetensors"), into),
                      doctest::Contains("tensor 'up.weight' element 2 is NaN"));
    mlp.layers[0].weight(2, 0) = 1.0;
    mlp.layers[1].weight(0, 3) = -std::numeric_limits<double>::infinity();
    nn::save_weights(dir.file("inf.safetensors"), mlp);
    CHECK_THROWS_WITH(nn::load_weights(dir.file("inf.safetensors"), into),
                      doctest::Contains("tensor 'down.weight' element 3 is infinite"));
    // 1e300 is a float64 but beyond float32: fine for a float64 model only.
    mlp.layers[1].weight(0, 3) = 1e300;
    nn::save_weights(dir.file("huge.safetensors"), mlp);
    CHECK_NOTHROW(nn::load_weights(dir.file("huge.safetensors"), into));
    nn::MLP<float> narrow({1, 4, 1}, nn::Activation::relu);
    CHECK_THROWS_WITH(nn::load_weights(dir.file("huge.safetensors"), narrow),
                      doctest::Contains("element 3 is beyond the model's float32 range"));
}

TEST_CASE("a header of many keys is refused at the key limit, and a file larger than its header says is refused unread") {
    test::TempDir dir;
    // 30,000 metadata keys: past kMaxJsonKeys. Without the limit an ordered
    // object parses this quadratically (160,000 keys took 97 s).
    std::string header = R"({"__metadata__": {)";
    for (int i = 0; i < 30000; ++i) header += (i ? "," : "") + std::string("\"k") + std::to_string(i) + "\": \"v\"";
    header += "}}";
    CHECK_THROWS_WITH(io::read_safetensors(with_header(dir, header, 0)), doctest::Contains("more than 20000 keys"));
    // 64 MiB of data where the header accounts for 8 bytes: refused by its
    // size, before the data is read (the message gives the excess).
    const std::string big = with_header(dir, R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}})", (64u << 20) + 8);
    CHECK_THROWS_WITH(io::read_safetensors(big), doctest::Contains("67108864 unused bytes at its end"));
}
