#include "bench/load_bench.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/timing.h"
#include "core/error.h"
#include "core/stats.h"
#include "io/atomic_file.h"
#include "io/checkpoint.h"
#include "nn/layouts.h"

namespace ffn::bench {

namespace {

namespace fs = std::filesystem;
using report::ColumnType;

constexpr std::size_t kLayers = 32, kD = 4096, kHidden = 11008, kVocab = 32000;

// A shard whose header lists `tensors` (name, dtype, shape) and whose data
// section is a hole of the right length: a real safetensors file, sparse.
std::uint64_t write_sparse_shard(const fs::path& path, const std::vector<std::tuple<std::string, std::string, std::vector<std::size_t>>>& tensors) {
    nlohmann::ordered_json header = nlohmann::ordered_json::object();
    header["__metadata__"] = {{"format", "pt"}, {"made_by", "ffn-lab bench load (sparse: every value 0)"}};
    std::uint64_t offset = 0;
    for (const auto& [name, dtype, shape] : tensors) {
        std::uint64_t bytes = dtype == "F32" ? 4 : 2;
        for (auto s : shape) bytes *= s;
        header[name] = {{"dtype", dtype}, {"shape", shape}, {"data_offsets", {offset, offset + bytes}}};
        offset += bytes;
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::string head(8, '\0');
    for (int b = 0; b < 8; ++b) head[static_cast<std::size_t>(b)] = static_cast<char>((text.size() >> (8 * b)) & 0xff);
    head += text;
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("bench load: cannot create " + path.string());
    const bool ok = ::write(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size()) &&
                    ::ftruncate(fd, static_cast<off_t>(head.size() + offset)) == 0;
    ::close(fd);
    if (!ok) throw Error("bench load: cannot write " + path.string());
    return head.size() + offset;
}

// Llama-7B's tensors, blocks 0-15 in the first shard, 16-31 and the head in
// the second; returns the checkpoint's apparent size in bytes.
std::uint64_t write_checkpoint(const fs::path& dir) {
    using Tensors = std::vector<std::tuple<std::string, std::string, std::vector<std::size_t>>>;
    Tensors shard[2];
    shard[0].push_back({"model.embed_tokens.weight", "BF16", {kVocab, kD}});
    for (std::size_t n = 0; n < kLayers; ++n) {
        Tensors& s = shard[n < kLayers / 2 ? 0 : 1];
        const std::string p = fmt::format("model.layers.{}.", n);
        for (const char* proj : {"q_proj", "k_proj", "v_proj", "o_proj"}) s.push_back({p + "self_attn." + proj + ".weight", "BF16", {kD, kD}});
        s.push_back({p + "mlp.gate_proj.weight", "BF16", {kHidden, kD}});
        s.push_back({p + "mlp.up_proj.weight", "BF16", {kHidden, kD}});
        s.push_back({p + "mlp.down_proj.weight", "BF16", {kD, kHidden}});
        s.push_back({p + "input_layernorm.weight", "BF16", {kD}});
        s.push_back({p + "post_attention_layernorm.weight", "BF16", {kD}});
    }
    shard[1].push_back({"model.norm.weight", "BF16", {kD}});
    shard[1].push_back({"lm_head.weight", "BF16", {kVocab, kD}});
    nlohmann::ordered_json index = {{"metadata", {{"total_size", 0}}}, {"weight_map", nlohmann::ordered_json::object()}};
    std::uint64_t total = 0;
    for (int i = 0; i < 2; ++i) {
        const std::string name = fmt::format("model-0000{}-of-00002.safetensors", i + 1);
        total += write_sparse_shard(dir / name, shard[i]);
        for (const auto& t : shard[i]) index["weight_map"][std::get<0>(t)] = name;
    }
    io::write_file_atomically((dir / "model.safetensors.index.json").string(), index.dump(1));
    io::write_file_atomically((dir / "config.json").string(), R"({"model_type": "llama", "hidden_act": "silu"})");
    return total;
}

}  // namespace

report::Table bench_load(const LoadBenchOptions& o) {
    if (o.layer >= kLayers) throw Error(fmt::format("bench load --layer: {} is not a block of the 32", o.layer));
    const fs::path dir = o.folder.empty() ? fs::temp_directory_path() / fmt::format("ffnlab-bench-load-{}", ::getpid()) : fs::path(o.folder);
    fs::create_directories(dir);
    struct Cleanup {
        fs::path dir;
        bool ours;
        ~Cleanup() {
            std::error_code ec;
            if (ours) fs::remove_all(dir, ec);
        }
    } cleanup{dir, o.folder.empty()};
    const std::uint64_t apparent = write_checkpoint(dir);

    const Measured idle = measure_in_child([] {}, "bench load");
    std::vector<double> seconds, peaks;
    for (int r = 0; r < std::max(1, o.repeats); ++r) {
        const Measured m = measure_in_child(
            [&] {
                const io::Checkpoint checkpoint = io::Checkpoint::open(dir.string());
                const nn::LayerSpec spec = nn::find_layer(checkpoint, o.layer);
                const auto layer = nn::load_layer<float>(checkpoint, spec);
                if (layer.spec.hidden != kHidden) std::abort();
            },
            "bench load");
        seconds.push_back(m.seconds);
        peaks.push_back(m.peak_mb);
    }
    const double layer_mb = 3.0 * kD * kHidden * 4 / (1024.0 * 1024.0);
    const double peak = *std::max_element(peaks.begin(), peaks.end());
    report::Table t("load");
    t.add_column("checkpoint", ColumnType::text)
        .add_column("checkpoint_gb", ColumnType::real, 3)
        .add_column("layer", ColumnType::integer)
        .add_column("layer_f32_mb", ColumnType::real, 4)
        .add_column("loads", ColumnType::integer)
        .add_column("seconds_median", ColumnType::real, 3)
        .add_column("seconds_max", ColumnType::real, 3)
        .add_column("peak_mb", ColumnType::real, 4)
        .add_column("idle_child_mb", ColumnType::real, 3)
        .add_column("peak_over_layer", ColumnType::real, 3);
    t.add_row({std::string("Llama-7B shapes, BF16, 2 shards, sparse"), static_cast<double>(apparent) / 1e9, static_cast<std::int64_t>(o.layer),
               layer_mb, static_cast<std::int64_t>(seconds.size()), median(seconds), *std::max_element(seconds.begin(), seconds.end()), peak,
               idle.peak_mb, peak / layer_mb});
    return t;
}

}  // namespace ffn::bench
