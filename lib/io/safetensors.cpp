#include "io/safetensors.h"

#include "io/json.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "core/error.h"
#include "io/atomic_file.h"

namespace ffn::io {

static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian; add byte swapping");

namespace {

using Json = nlohmann::ordered_json;

std::size_t dtype_size(DType d) { return d == DType::F32 ? 4 : 8; }
const char* dtype_name(DType d) { return d == DType::F32 ? "F32" : "F64"; }

// Every dtype the format defines; ffn-lab reads F32 and F64.
const std::set<std::string> kKnownDtypes = {"BOOL", "U8",  "I8",  "F8_E5M2", "F8_E4M3", "I16", "U16", "F16",
                                            "BF16", "I32", "U32", "F32",     "F64",     "I64", "U64"};

// Header lengths above this are refused before allocating (the reference
// implementation's limit is 100 MB).
constexpr std::uint64_t kMaxHeader = 100'000'000;

}  // namespace

std::size_t TensorData::element_count() const {
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    return n;
}

std::vector<double> TensorData::as_doubles() const {
    std::vector<double> out(element_count());
    for (std::size_t i = 0; i < out.size(); ++i) {
        if (dtype == DType::F32) {
            float f;
            std::memcpy(&f, bytes.data() + 4 * i, 4);
            out[i] = f;
        } else {
            std::memcpy(&out[i], bytes.data() + 8 * i, 8);
        }
    }
    return out;
}

const TensorData* SafetensorsFile::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
}

template <class T>
TensorData make_tensor(const std::string& name, const std::vector<std::size_t>& shape, const T* values) {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>);
    TensorData t{name, std::is_same_v<T, float> ? DType::F32 : DType::F64, shape, {}};
    t.bytes.resize(t.element_count() * sizeof(T));
    if (!t.bytes.empty()) std::memcpy(t.bytes.data(), values, t.bytes.size());
    return t;
}

void write_safetensors(const std::string& path, const SafetensorsFile& file) {
    Json header = Json::object();
    if (!file.metadata.empty()) {
        Json meta = Json::object();
        for (const auto& [k, v] : file.metadata) meta[k] = v;
        header["__metadata__"] = meta;
    }
    std::uint64_t offset = 0;
    std::set<std::string> names;
    for (const auto& t : file.tensors) {
        if (t.name == "__metadata__" || !names.insert(t.name).second)
            throw Error(path + ": tensor name '" + t.name + "' is reserved or repeated");
        if (t.bytes.size() != t.element_count() * dtype_size(t.dtype))
            throw Error(path + ": tensor '" + t.name + "' has a byte count that does not match its shape");
        header[t.name] = {{"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + t.bytes.size()}}};
        offset += t.bytes.size();
    }
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' ');
    std::string out(8, '\0');
    const std::uint64_t n = text.size();
    for (int b = 0; b < 8; ++b) out[static_cast<std::size_t>(b)] = static_cast<char>((n >> (8 * b)) & 0xff);
    out += text;
    for (const auto& t : file.tensors) out.append(reinterpret_cast<const char*>(t.bytes.data()), t.bytes.size());
    write_file_atomically(path, out);
}

SafetensorsFile read_safetensors(const std::string& path) {
    auto fail = [&](const std::string& what) -> Error { return Error(path + ": not a valid safetensors file: " + what); };
    // The header first, and the data only once the header has said how
    // large it is: a file far larger than its header is refused unread.
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        throw Error(path + ": not a regular file (a folder, a pipe or a device?), expected a safetensors file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error(path + ": cannot open file (" + std::strerror(errno) + ")");
    in.seekg(0, std::ios::end);
    const auto file_size = static_cast<std::uint64_t>(std::max<std::streamoff>(0, in.tellg()));
    in.seekg(0);
    if (file_size < 8) throw fail("shorter than the 8-byte header length");
    unsigned char length[8];
    in.read(reinterpret_cast<char*>(length), 8);
    std::uint64_t n = 0;
    for (int b = 7; b >= 0; --b) n = (n << 8) | length[b];
    if (n > kMaxHeader) throw fail("header length " + std::to_string(n) + " is implausibly large");
    if (n > file_size - 8) throw fail("header length " + std::to_string(n) + " runs past the end of the file");
    std::string header_text(n, '\0');
    in.read(header_text.data(), static_cast<std::streamsize>(n));
    const Json header = parse_json(header_text, path + ": safetensors header");
    if (!header.is_object()) throw fail("header is not a JSON object");
    const std::uint64_t data_size = file_size - 8 - n;
    std::uint64_t data_end = 0;
    for (const auto& item : header.items())
        if (item.key() != "__metadata__" && item.value().is_object() && item.value().contains("data_offsets") &&
            item.value()["data_offsets"].is_array() && item.value()["data_offsets"].size() == 2 &&
            item.value()["data_offsets"][1].is_number_unsigned())
            data_end = std::max(data_end, item.value()["data_offsets"][1].get<std::uint64_t>());
    if (data_end < data_size)
        throw fail("the data section has " + std::to_string(data_size - data_end) + " unused bytes at its end");
    std::string data(data_size, '\0');
    in.read(data.data(), static_cast<std::streamsize>(data_size));
    if (!in) throw Error(path + ": cannot read the file whole (" + std::strerror(errno) + ")");
    const char* base = data.data();

    SafetensorsFile file;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    for (const auto& item : header.items()) {
        const std::string& name = item.key();
        const Json& e = item.value();
        if (name == "__metadata__") {
            if (!e.is_object()) throw fail("__metadata__ is not an object");
            for (const auto& m : e.items()) {
                if (!m.value().is_string()) throw fail("__metadata__ value for '" + m.key() + "' is not a string");
                file.metadata[m.key()] = m.value().get<std::string>();
            }
            continue;
        }
        const std::string where = "tensor '" + name + "': ";
        if (!e.is_object() || !e.contains("dtype") || !e.contains("shape") || !e.contains("data_offsets"))
            throw fail(where + "needs dtype, shape and data_offsets");
        for (const auto& field : e.items())
            if (field.key() != "dtype" && field.key() != "shape" && field.key() != "data_offsets")
                throw fail(where + "unknown field '" + field.key() + "'");
        if (!e["dtype"].is_string()) throw fail(where + "dtype is not a string");
        const std::string dtype = e["dtype"].get<std::string>();
        if (!kKnownDtypes.count(dtype)) throw fail(where + "unknown dtype '" + dtype + "'");
        if (dtype != "F32" && dtype != "F64")
            throw Error(path + ": " + where + "dtype " + dtype + " is not supported (ffn-lab reads F32 and F64)");
        TensorData t{name, dtype == "F32" ? DType::F32 : DType::F64, {}, {}};
        if (!e["shape"].is_array()) throw fail(where + "shape is not a list");
        std::uint64_t count = 1;
        for (const auto& s : e["shape"]) {
            if (!s.is_number_unsigned()) throw fail(where + "shape holds " + s.dump() + ", not a size");
            const auto dim = s.get<std::uint64_t>();
            if (dim != 0 && count > (std::uint64_t{1} << 48) / dim) throw fail(where + "shape is too large");
            count *= dim;
            t.shape.push_back(static_cast<std::size_t>(dim));
        }
        const Json& off = e["data_offsets"];
        if (!off.is_array() || off.size() != 2 || !off[0].is_number_unsigned() || !off[1].is_number_unsigned())
            throw fail(where + "data_offsets is not a pair of offsets");
        const auto begin = off[0].get<std::uint64_t>(), end = off[1].get<std::uint64_t>();
        if (begin > end || end > data_size)
            throw fail(where + "data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                       "] lie outside the data section of " + std::to_string(data_size) + " bytes");
        if (end - begin != count * dtype_size(t.dtype))
            throw fail(where + "shape needs " + std::to_string(count * dtype_size(t.dtype)) + " bytes, data_offsets give " +
                       std::to_string(end - begin));
        t.bytes.assign(base + begin, base + end);
        ranges.emplace_back(begin, end);
        file.tensors.push_back(std::move(t));
    }
    // The tensors must tile the data section exactly.
    std::sort(ranges.begin(), ranges.end());
    std::uint64_t covered = 0;
    for (const auto& [begin, end] : ranges) {
        if (begin < covered) throw fail("two tensors' data_offsets overlap");
        if (begin > covered) throw fail("the data section has a gap at byte " + std::to_string(covered));
        covered = end;
    }
    if (covered != data_size) throw fail("the data section has " + std::to_string(data_size - covered) + " unused bytes at its end");
    return file;
}

template TensorData make_tensor<float>(const std::string&, const std::vector<std::size_t>&, const float*);
template TensorData make_tensor<double>(const std::string&, const std::vector<std::size_t>&, const double*);

}  // namespace ffn::io
