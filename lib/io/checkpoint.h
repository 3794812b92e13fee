#pragma once
// A checkpoint as Hugging Face ships one: a single safetensors file, or a
// folder holding model.safetensors or a sharded model.safetensors.index.json
// ({"weight_map": {tensor name: shard file}}), with config.json beside the
// weights when present. Opening reads the index and the headers only; a
// tensor's bytes are read when it is asked for, from its own shard, so one
// layer of a 7B model costs that layer's bytes.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/json.h"
#include "io/safetensors.h"

namespace ffn::io {

class Checkpoint {
public:
    // `path`: a .safetensors file, or a folder as above. Throws ffn::Error
    // naming the path and the defect: no weights in the folder, an index
    // that is not an object of names to shard files, a shard name that
    // leaves the folder (absolute, "..", a subfolder) or is missing.
    static Checkpoint open(const std::string& path);

    // The path as the user named it, for tables and messages: a built-in
    // checkpoint's copy lives in a temporary folder named anew each process.
    const std::string& path() const { return path_; }
    // The folder of the weights (and of config.json).
    const std::string& folder() const { return folder_; }
    // Every tensor name, sorted.
    std::vector<std::string> names() const;
    bool has(const std::string& name) const { return shard_of_.count(name) != 0; }
    // The header entry of a tensor (reading its shard's header on first
    // use); throws naming the shard when the index maps the tensor to a
    // shard that does not hold it.
    const TensorEntry& entry(const std::string& name) const;
    // The tensor's bytes, from its shard alone.
    TensorData read(const std::string& name) const;
    // The tensor's values [begin, end), widened, piece by piece
    // (read_tensor_values). Once entry(name) has been called, threads may
    // call this at once (it then only looks up what is cached).
    void read_values(const std::string& name, const std::function<void(std::size_t first, std::span<const double> values)>& sink,
                     std::size_t begin = 0, std::size_t end = SIZE_MAX) const;
    // config.json beside the weights, if there is one (an object).
    const std::optional<Json>& config() const { return config_; }
    // Where a tensor lives, for messages: "model-00002-of-00002.safetensors".
    std::string shard_name(const std::string& name) const;

private:
    std::string path_, folder_;
    std::map<std::string, std::string> shard_of_;  // tensor -> shard file path
    std::optional<Json> config_;
    // Shard headers read so far, by shard path (entry() is const and lazy).
    mutable std::map<std::string, std::shared_ptr<const SafetensorsHeader>> headers_;
    const SafetensorsHeader& header_of(const std::string& shard) const;
};

}  // namespace ffn::io
