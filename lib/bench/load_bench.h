#pragma once
// `bench load`: what reading one MLP layer of a large checkpoint costs. A
// synthetic checkpoint of Llama-7B's shapes (32 blocks, d 4096, MLP hidden
// 11008, BF16, two shards through model.safetensors.index.json, with the
// attention, norm, embedding and head tensors a real one has) is written
// sparse: its headers are real, its data are holes, so it costs no disk.
// One block's MLP is then loaded in a child process of its own (as a
// config's "weights" and "layer" load it): wall time and peak memory,
// beside the layer's own float32 size and a child that loads nothing.
#include <string>

#include "report/table.h"

namespace ffn::bench {

struct LoadBenchOptions {
    std::size_t layer = 17;  // in the second shard
    int repeats = 3;         // loads timed; the median is reported
    std::string folder;      // where the checkpoint is made; empty: a temporary folder
};

report::Table bench_load(const LoadBenchOptions& options);

}  // namespace ffn::bench
