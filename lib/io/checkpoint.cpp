#include "io/checkpoint.h"
#include "io/bundle.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "io/atomic_file.h"

namespace ffn::io {

namespace fs = std::filesystem;

namespace {

constexpr const char* kSingle = "model.safetensors";
constexpr const char* kIndex = "model.safetensors.index.json";

bool is_file(const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec);
}

// A shard named by the index must be a plain file name in the folder: an
// index is data, and data must not send the reader elsewhere.
std::string shard_path(const std::string& folder, const std::string& index, const std::string& tensor, const std::string& shard) {
    const fs::path name(shard);
    if (shard.empty() || name.is_absolute() || name.has_parent_path() || shard == "." || shard == ".." ||
        shard.find('\0') != std::string::npos)
        throw Error(index + ": tensor '" + tensor + "' is mapped to shard '" + shard +
                    "', which is not a file name in the checkpoint's folder");
    return (fs::path(folder) / name).string();
}

}  // namespace

Checkpoint Checkpoint::open(const std::string& given) {
    const std::string path = bundle::locate(given);
    Checkpoint c;
    c.path_ = bundle::shown(path);
    std::error_code ec;
    const auto status = fs::status(path, ec);
    if (!fs::exists(status)) throw Error(path + ": no such file or folder (expected a safetensors file or a checkpoint folder)");
    if (fs::is_directory(status)) {
        c.folder_ = path;
        const fs::path index = fs::path(path) / kIndex, single = fs::path(path) / kSingle;
        if (is_file(index)) {
            const Json j = parse_json(read_file(index.string()), index.string());
            if (!j.is_object() || !j.contains("weight_map") || !j["weight_map"].is_object())
                throw Error(index.string() + ": expected an object with a \"weight_map\" of tensor names to shard files");
            for (const auto& item : j["weight_map"].items()) {
                if (!item.value().is_string())
                    throw Error(index.string() + ": tensor '" + item.key() + "' is mapped to " + item.value().dump() + ", not a shard file name");
                c.shard_of_[item.key()] = shard_path(path, index.string(), item.key(), item.value().get<std::string>());
            }
            if (c.shard_of_.empty()) throw Error(index.string() + ": the weight_map names no tensor");
        } else if (is_file(single)) {
            for (const auto& e : c.header_of(single.string()).tensors) c.shard_of_[e.name] = single.string();
        } else {
            throw Error(path + ": a folder without " + kSingle + " or " + kIndex + " (expected a Hugging Face checkpoint folder)");
        }
    } else {
        if (!fs::is_regular_file(status))
            throw Error(path + ": not a regular file (a pipe or a device?), expected a safetensors file or a checkpoint folder");
        c.folder_ = fs::path(path).parent_path().string();
        if (c.folder_.empty()) c.folder_ = ".";
        for (const auto& e : c.header_of(path).tensors) c.shard_of_[e.name] = path;
    }
    const fs::path config = fs::path(c.folder_) / "config.json";
    if (is_file(config)) {
        Json j = parse_json(read_file(config.string()), config.string());
        if (!j.is_object()) throw Error(config.string() + ": expected a JSON object (a model's config.json)");
        c.config_ = std::move(j);
    }
    return c;
}

std::vector<std::string> Checkpoint::names() const {
    std::vector<std::string> out;
    out.reserve(shard_of_.size());
    for (const auto& [name, shard] : shard_of_) out.push_back(name);
    return out;
}

const SafetensorsHeader& Checkpoint::header_of(const std::string& shard) const {
    auto& slot = headers_[shard];
    if (!slot) {
        if (!is_file(shard)) {
            std::error_code ec;
            throw Error(shard + (fs::exists(shard, ec) ? ": not a regular file" : ": no such shard") + " (named by " +
                        (fs::path(folder_) / kIndex).string() + ")");
        }
        slot = std::make_shared<const SafetensorsHeader>(read_safetensors_header(shard));
    }
    return *slot;
}

std::string Checkpoint::shard_name(const std::string& name) const {
    const auto it = shard_of_.find(name);
    return it == shard_of_.end() ? path_ : fs::path(it->second).filename().string();
}

const TensorEntry& Checkpoint::entry(const std::string& name) const {
    const auto it = shard_of_.find(name);
    if (it == shard_of_.end()) throw Error(path_ + ": no tensor '" + name + "'");
    const TensorEntry* e = header_of(it->second).find(name);
    if (!e) throw Error(it->second + ": no tensor '" + name + "', though " + kIndex + " maps it to this shard");
    return *e;
}

TensorData Checkpoint::read(const std::string& name) const {
    const TensorEntry& e = entry(name);
    return read_tensor(header_of(shard_of_.at(name)), e);
}

void Checkpoint::read_values(const std::string& name,
                             const std::function<void(std::size_t first, std::span<const double> values)>& sink, std::size_t begin,
                             std::size_t end) const {
    const TensorEntry& e = entry(name);
    read_tensor_values(header_of(shard_of_.at(name)), e, sink, begin, end);
}

}  // namespace ffn::io
