#pragma once
// The safetensors format (huggingface/safetensors), read and written exactly:
//   8 bytes   N, the header length, unsigned little-endian
//   N bytes   a JSON object: {"__metadata__": {str: str}, NAME: {"dtype",
//             "shape", "data_offsets": [begin, end]}, ...}, padded with spaces
//   the rest  the data section; offsets are relative to its start, tensors
//             are C-order little-endian and tile it without gaps or overlap.
// Weights are data: this format cannot run code, and every header field is
// checked before a byte of data is trusted.
//
// A checkpoint may be many gigabytes, so the header is read on its own and a
// tensor's bytes only when that tensor is asked for (read_tensor, one
// positioned read); read_safetensors reads a whole (small) file.
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ffn::io {

// The dtypes ffn-lab reads; F16 and BF16 widen exactly to float32 and
// float64 (every half and bfloat16 value is a float32 value).
enum class DType { F32, F64, F16, BF16 };

struct TensorData {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::size_t> shape;
    std::vector<unsigned char> bytes;  // little-endian, C order

    std::size_t element_count() const;
    // Values widened (F16, BF16, F32) or kept (F64) as doubles, exactly.
    std::vector<double> as_doubles() const;
};

// A half (IEEE binary16) and a bfloat16 given as their bits, widened
// exactly: subnormals, signed zeros, infinities and NaNs included.
float half_to_float(std::uint16_t bits);
float bfloat16_to_float(std::uint16_t bits);

// One tensor as the header lists it: any dtype the format defines (a
// checkpoint may hold tensors ffn-lab does not read beside those it does),
// its byte range checked against the shape and the file.
struct TensorEntry {
    std::string name, dtype;  // dtype as the file names it ("BF16", "I8", ...)
    std::vector<std::size_t> shape;
    std::uint64_t begin = 0, end = 0;  // within the data section
};

struct SafetensorsHeader {
    std::string path;  // as the user named it, for messages (io/bundle.h's shown)
    std::uint64_t data_start = 0;  // file offset of the data section
    std::vector<TensorEntry> tensors;
    std::map<std::string, std::string> metadata;
    const TensorEntry* find(const std::string& name) const;
    std::string file = {};  // what is read: a built-in file's temporary copy, else path
};

// Reads the 8-byte length and the header, nothing of the data section.
// Throws ffn::Error naming the file and the defect: too short, header length
// past the end, invalid JSON, unknown dtype, a shape whose size does not
// match its byte range, ranges outside the data section, overlapping or
// leaving gaps, malformed metadata.
SafetensorsHeader read_safetensors_header(const std::string& path);

// The bytes of one tensor of `header`, read with one positioned read.
// Throws ffn::Error when its dtype is not one ffn-lab reads (quantised ones
// named as such) or the file changed under the reader.
TensorData read_tensor(const SafetensorsHeader& header, const TensorEntry& entry);

// The values [begin, end) of one tensor of `header` (all of them by
// default), widened exactly to double, handed to `sink(first, values)` in
// pieces of at most 1 MiB of the file's bytes, in order: a tensor of any
// size is read in bounded memory beside its destination, and two threads
// may read two ranges of it at once. Throws as read_tensor does.
void read_tensor_values(const SafetensorsHeader& header, const TensorEntry& entry,
                        const std::function<void(std::size_t first, std::span<const double> values)>& sink, std::size_t begin = 0,
                        std::size_t end = SIZE_MAX);

struct SafetensorsFile {
    std::vector<TensorData> tensors;
    std::map<std::string, std::string> metadata;
    const TensorData* find(const std::string& name) const;
};

// Writes atomically; tensors in the order given. Throws ffn::Error on a
// duplicate name or a byte count that does not match the shape.
void write_safetensors(const std::string& path, const SafetensorsFile& file);

// The header and every tensor; each must be of a dtype ffn-lab reads.
SafetensorsFile read_safetensors(const std::string& path);

// The DType of a dtype name ffn-lab reads, else nothing.
std::optional<DType> readable_dtype(const std::string& name);
const char* dtype_name(DType d);

template <class T>
TensorData make_tensor(const std::string& name, const std::vector<std::size_t>& shape, const T* values);

}  // namespace ffn::io
