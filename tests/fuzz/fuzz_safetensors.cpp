// A weights file read and loaded into a model of each dtype (1-4-1, the
// shape of the seed corpus), as `"weights": "file"` in a config does: by
// the parameters' own names, then through a "names" map and PyTorch's
// nn.Sequential aliases.
#include "nn/mlp.h"
#include "nn/weights.h"
#include "tests/fuzz/harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string path =
        ffn::fuzz::scratch_file("model.safetensors", std::string_view(reinterpret_cast<const char*>(data), size));
    ffn::fuzz::accept_or_refuse([&] {
        ffn::nn::MLP<float> model({1, 4, 1}, ffn::nn::Activation::relu);
        ffn::nn::load_weights(path, model);
    });
    return ffn::fuzz::accept_or_refuse([&] {
        ffn::nn::MLP<double> model({1, 4, 1}, ffn::nn::Activation::relu);
        ffn::nn::load_weights(path, model, {{"up.weight", "0.weight"}}, {{"up.bias", "0.bias"}, {"down.weight", "2.weight"}, {"down.bias", "2.bias"}});
    });
}
