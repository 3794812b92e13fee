// A sharded checkpoint's index (model.safetensors.index.json) as a config's
// "weights" and "layer" read it: the fuzz input is the index, beside two
// valid shards of a two-block Llama-style model (d 3, hidden 4) written
// once; the layer is found and loaded as float32 and float64.
#include "io/checkpoint.h"
#include "io/safetensors.h"
#include "nn/layouts.h"
#include "tests/fuzz/harness.h"

namespace {

// The shards, written on first use: block N in shard N + 1.
const std::string& checkpoint_folder() {
    static const std::string folder = [] {
        const auto dir = ffn::fuzz::scratch_folder() / "checkpoint";
        std::filesystem::create_directories(dir);
        const std::vector<float> v(12, 0.5f);
        for (int n = 0; n < 2; ++n) {
            const std::string p = "model.layers." + std::to_string(n) + ".mlp.";
            ffn::io::SafetensorsFile f;
            f.tensors = {ffn::io::make_tensor<float>(p + "gate_proj.weight", {4, 3}, v.data()),
                         ffn::io::make_tensor<float>(p + "up_proj.weight", {4, 3}, v.data()),
                         ffn::io::make_tensor<float>(p + "down_proj.weight", {3, 4}, v.data())};
            ffn::io::write_safetensors((dir / ("model-0000" + std::to_string(n + 1) + "-of-00002.safetensors")).string(), f);
        }
        return dir.string();
    }();
    return folder;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string& folder = checkpoint_folder();
    ffn::io::write_file_atomically(folder + "/model.safetensors.index.json", std::string(reinterpret_cast<const char*>(data), size));
    for (const std::optional<std::size_t> layer : {std::optional<std::size_t>{}, std::optional<std::size_t>{1}})
        ffn::fuzz::accept_or_refuse([&] {
            const auto checkpoint = ffn::io::Checkpoint::open(folder);
            const auto spec = ffn::nn::find_layer(checkpoint, layer);
            (void)ffn::nn::load_layer<float>(checkpoint, spec);
            (void)ffn::nn::load_layer<double>(checkpoint, spec);
        });
    return 0;
}
