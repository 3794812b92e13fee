#pragma once
// The safetensors format (huggingface/safetensors), read and written exactly:
//   8 bytes   N, the header length, unsigned little-endian
//   N bytes   a JSON object: {"__metadata__": {str: str}, NAME: {"dtype",
//             "shape", "data_offsets": [begin, end]}, ...}, padded with spaces
//   the rest  the data section; offsets are relative to its start, tensors
//             are C-order little-endian and tile it without gaps or overlap.
// Weights are data: this format cannot run code, and every header field is
// checked before a byte of data is trusted.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ffn::io {

enum class DType { F32, F64 };

struct TensorData {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::size_t> shape;
    std::vector<unsigned char> bytes;  // little-endian, C order

    std::size_t element_count() const;
    // Values widened or narrowed to double / float.
    std::vector<double> as_doubles() const;
};

struct SafetensorsFile {
    std::vector<TensorData> tensors;
    std::map<std::string, std::string> metadata;
    const TensorData* find(const std::string& name) const;
};

// Writes atomically; tensors in the order given. Throws ffn::Error on a
// duplicate name or a byte count that does not match the shape.
void write_safetensors(const std::string& path, const SafetensorsFile& file);

// Throws ffn::Error naming the file and the defect: too short, header length
// past the end, invalid JSON, unknown or unsupported dtype, a shape whose
// size does not match its byte range, ranges outside the data section,
// overlapping or leaving gaps, malformed metadata.
SafetensorsFile read_safetensors(const std::string& path);

template <class T>
TensorData make_tensor(const std::string& name, const std::vector<std::size_t>& shape, const T* values);

}  // namespace ffn::io
