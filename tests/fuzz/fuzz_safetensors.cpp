// A weights file read and loaded into a model of each dtype (1-4-1, the
// shape of the seed corpus), as `"weights": "file"` in a config does: by
// the parameters' own names, then through a "names" map and PyTorch's
// nn.Sequential aliases; and as a checkpoint whose layer is found by its
// Hugging Face names, in any dtype (the F16 and BF16 widening).
#include "io/checkpoint.h"
#include "nn/layouts.h"
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
    ffn::fuzz::accept_or_refuse([&] {
        const auto checkpoint = ffn::io::Checkpoint::open(path);
        (void)ffn::nn::load_layer<float>(checkpoint, ffn::nn::find_layer(checkpoint, std::nullopt));
    });
    return ffn::fuzz::accept_or_refuse([&] {
        ffn::nn::MLP<double> model({1, 4, 1}, ffn::nn::Activation::relu);
        ffn::nn::load_weights(path, model, {{"up.weight", "0.weight"}}, {{"up.bias", "0.bias"}, {"down.weight", "2.weight"}, {"down.bias", "2.bias"}});
    });
}
