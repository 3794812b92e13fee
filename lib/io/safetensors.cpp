#include "io/safetensors.h"
#include "io/bundle.h"

#include "io/json.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>
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

// Every dtype the format defines, with its size in bytes; ffn-lab reads the
// four of DType and checks the byte ranges of all.
const std::map<std::string, std::uint64_t> kDtypeBytes = {
    {"BOOL", 1}, {"U8", 1},  {"I8", 1},  {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
    {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4},     {"F64", 8},     {"I64", 8}, {"U64", 8}};

std::size_t dtype_size(DType d) {
    switch (d) {
        case DType::F16:
        case DType::BF16: return 2;
        case DType::F32: return 4;
        case DType::F64: return 8;
    }
    return 0;
}

// Header lengths above this are refused before allocating (the reference
// implementation's limit is 100 MB).
constexpr std::uint64_t kMaxHeader = 100'000'000;

std::uint16_t u16_at(const unsigned char* p) { return static_cast<std::uint16_t>(p[0] | (p[1] << 8)); }

}  // namespace

const char* dtype_name(DType d) {
    switch (d) {
        case DType::F16: return "F16";
        case DType::BF16: return "BF16";
        case DType::F32: return "F32";
        case DType::F64: return "F64";
    }
    return "?";
}

std::optional<DType> readable_dtype(const std::string& name) {
    for (DType d : {DType::F32, DType::F64, DType::F16, DType::BF16})
        if (name == dtype_name(d)) return d;
    return std::nullopt;
}

float half_to_float(std::uint16_t bits) {
    const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
    const std::uint32_t exponent = (bits >> 10) & 0x1fu, mantissa = bits & 0x3ffu;
    if (exponent == 0) {
        // Zero or subnormal: mantissa * 2^-24, exact in float32.
        const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
        return sign ? -magnitude : magnitude;
    }
    std::uint32_t out;
    if (exponent == 0x1f) out = sign | 0x7f800000u | (mantissa << 13);  // inf, or NaN with its payload
    else out = sign | ((exponent + 112) << 23) | (mantissa << 13);     // rebias 15 -> 127
    return std::bit_cast<float>(out);
}

float bfloat16_to_float(std::uint16_t bits) { return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16); }

std::size_t TensorData::element_count() const {
    std::size_t n = 1;
    for (auto s : shape) n *= s;
    return n;
}

std::vector<double> TensorData::as_doubles() const {
    std::vector<double> out(element_count());
    const unsigned char* p = bytes.data();
    for (std::size_t i = 0; i < out.size(); ++i) {
        switch (dtype) {
            case DType::F16: out[i] = half_to_float(u16_at(p + 2 * i)); break;
            case DType::BF16: out[i] = bfloat16_to_float(u16_at(p + 2 * i)); break;
            case DType::F32: {
                float f;
                std::memcpy(&f, p + 4 * i, 4);
                out[i] = f;
                break;
            }
            case DType::F64: std::memcpy(&out[i], p + 8 * i, 8); break;
        }
    }
    return out;
}

const TensorEntry* SafetensorsHeader::find(const std::string& name) const {
    for (const auto& t : tensors)
        if (t.name == name) return &t;
    return nullptr;
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

SafetensorsHeader read_safetensors_header(const std::string& given) {
    const std::string path = bundle::locate(given);
    auto fail = [&](const std::string& what) -> Error { return Error(path + ": not a valid safetensors file: " + what); };
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
    if (!in) throw Error(path + ": cannot read the header (" + std::strerror(errno) + ")");
    const Json header = parse_json(header_text, path + ": safetensors header");
    if (!header.is_object()) throw fail("header is not a JSON object");
    const std::uint64_t data_size = file_size - 8 - n;

    SafetensorsHeader out{bundle::shown(path), 8 + n, {}, {}, path};
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges;
    for (const auto& item : header.items()) {
        const std::string& name = item.key();
        const Json& e = item.value();
        if (name == "__metadata__") {
            if (!e.is_object()) throw fail("__metadata__ is not an object");
            for (const auto& m : e.items()) {
                if (!m.value().is_string()) throw fail("__metadata__ value for '" + m.key() + "' is not a string");
                out.metadata[m.key()] = m.value().get<std::string>();
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
        TensorEntry t{name, e["dtype"].get<std::string>(), {}, 0, 0};
        const auto size = kDtypeBytes.find(t.dtype);
        if (size == kDtypeBytes.end()) throw fail(where + "unknown dtype '" + t.dtype + "'");
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
        t.begin = off[0].get<std::uint64_t>();
        t.end = off[1].get<std::uint64_t>();
        if (t.begin > t.end || t.end > data_size)
            throw fail(where + "data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                       "] lie outside the data section of " + std::to_string(data_size) + " bytes");
        if (t.end - t.begin != count * size->second)
            throw fail(where + "shape needs " + std::to_string(count * size->second) + " bytes, data_offsets give " +
                       std::to_string(t.end - t.begin));
        ranges.emplace_back(t.begin, t.end);
        out.tensors.push_back(std::move(t));
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
    return out;
}

namespace {

// The readable dtype of an entry, or the error that names why not.
DType dtype_to_read(const SafetensorsHeader& header, const TensorEntry& entry) {
    if (const auto dtype = readable_dtype(entry.dtype)) return *dtype;
    const bool quantised = entry.dtype == "I8" || entry.dtype == "U8" || entry.dtype.rfind("F8_", 0) == 0;
    throw Error(header.path + ": tensor '" + entry.name + "': dtype " + entry.dtype +
                (quantised ? " is a quantised format; " : " is not one ffn-lab reads; ") + "ffn-lab reads F32, F64, F16 and BF16" +
                (quantised ? " (dequantise the checkpoint first)" : ""));
}

// Reads bytes [from, from + n) of the entry's data into `into`.
void read_bytes(const SafetensorsHeader& header, const TensorEntry& entry, int fd, std::uint64_t from, std::size_t n, unsigned char* into) {
    std::size_t done = 0;
    while (done < n) {
        const ssize_t got = ::pread(fd, into + done, n - done, static_cast<off_t>(header.data_start + entry.begin + from + done));
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0)
            throw Error(header.path + ": tensor '" + entry.name + "': " +
                        (got == 0 ? std::string("the file ends before the tensor's bytes (changed since its header was read?)")
                                  : "cannot read its bytes (" + std::string(std::strerror(errno)) + ")"));
        done += static_cast<std::size_t>(got);
    }
}

struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

Fd open_for(const SafetensorsHeader& header, const TensorEntry& entry) {
    Fd f{::open(header.file.c_str(), O_RDONLY | O_CLOEXEC)};
    if (f.fd < 0) throw Error(header.path + ": tensor '" + entry.name + "': cannot open the file (" + std::strerror(errno) + ")");
    return f;
}

}  // namespace

TensorData read_tensor(const SafetensorsHeader& header, const TensorEntry& entry) {
    TensorData t{entry.name, dtype_to_read(header, entry), entry.shape, std::vector<unsigned char>(entry.end - entry.begin)};
    const Fd f = open_for(header, entry);
    read_bytes(header, entry, f.fd, 0, t.bytes.size(), t.bytes.data());
    return t;
}

void read_tensor_values(const SafetensorsHeader& header, const TensorEntry& entry,
                        const std::function<void(std::size_t first, std::span<const double> values)>& sink, std::size_t begin,
                        std::size_t end) {
    const DType dtype = dtype_to_read(header, entry);
    const std::size_t size = dtype_size(dtype), per_piece = (std::size_t{1} << 20) / 8;
    const std::uint64_t count = std::min<std::uint64_t>(end, (entry.end - entry.begin) / size);
    const Fd f = open_for(header, entry);
    TensorData piece{entry.name, dtype, {}, {}};
    for (std::uint64_t first = begin; first < count; first += per_piece) {
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(per_piece, count - first));
        piece.shape = {n};
        piece.bytes.resize(n * size);
        read_bytes(header, entry, f.fd, first * size, n * size, piece.bytes.data());
        const std::vector<double> values = piece.as_doubles();
        sink(static_cast<std::size_t>(first), values);
    }
}

SafetensorsFile read_safetensors(const std::string& path) {
    const SafetensorsHeader header = read_safetensors_header(path);
    SafetensorsFile file;
    file.metadata = header.metadata;
    for (const auto& entry : header.tensors) file.tensors.push_back(read_tensor(header, entry));
    return file;
}

template TensorData make_tensor<float>(const std::string&, const std::vector<std::size_t>&, const float*);
template TensorData make_tensor<double>(const std::string&, const std::vector<std::size_t>&, const double*);

}  // namespace ffn::io
