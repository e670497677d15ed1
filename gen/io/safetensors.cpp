// safetensors reader/writer. The reader checks every number in the header
// against the file before touching data: the header length, each tensor's
// offsets, its size against dtype x shape, and overlaps between tensors.
#include "io/safetensors.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "io/file_util.h"
#include "io/json_util.h"
#include "ir/error.h"
#include "ir/half.h"
#include "ir/limits.h"
#include "ir/names.h"

// The data is copied as raw bytes, so the host must share the file's byte order.
#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "safetensors data is little-endian; hybgen assumes such a host");
#endif

namespace hybgen {
namespace {

uint64_t read_u64_le(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

// The safetensors names of the dtypes read and written; F64 is narrowed to
// float32 as it is read (the weights generated code takes are float32).
struct FileDType {
  const char* name;
  DType dtype;
};
constexpr FileDType kFileDTypes[] = {{"F32", DType::kFloat32}, {"F16", DType::kFloat16}, {"BF16", DType::kBFloat16},
                                     {"I8", DType::kInt8},     {"U8", DType::kUInt8},    {"I32", DType::kInt32},
                                     {"I64", DType::kInt64},   {"BOOL", DType::kBool},   {"F64", DType::kFloat64}};

std::optional<DType> file_dtype(const std::string& name) {
  for (const FileDType& f : kFileDTypes)
    if (name == f.name) return f.dtype;
  return std::nullopt;
}

const char* file_dtype_name(DType dtype) {
  for (const FileDType& f : kFileDTypes)
    if (dtype == f.dtype) return f.name;
  return "?";
}

void check_metadata(const nlohmann::json& metadata, const std::string& source) {
  if (!metadata.is_object()) throw Error(source + ": \"__metadata__\" must be an object of strings");
  for (const auto& [key, value] : metadata.items())
    if (!value.is_string()) throw Error(source + ": \"__metadata__\" entry " + quoted_name(key) + " must be a string");
}


// Ranges sorted by start overlap when one starts before the furthest end seen
// so far; empty tensors occupy no bytes and overlap nothing.
void check_no_overlap(std::vector<std::pair<uint64_t, uint64_t>> ranges, const std::string& source) {
  std::sort(ranges.begin(), ranges.end());
  uint64_t furthest_end = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin == end) continue;
    if (begin < furthest_end)
      throw Error(source + ": tensors overlap at data bytes " + std::to_string(begin) + ".." +
                  std::to_string(std::min(end, furthest_end)));
    furthest_end = std::max(furthest_end, end);
  }
}

}  // namespace

std::map<std::string, Constant> parse_safetensors(const std::vector<uint8_t>& bytes, const std::string& source) {
  if (bytes.size() < 8)
    throw Error(source + ": truncated: " + std::to_string(bytes.size()) + " bytes, a safetensors file needs at least 8");
  const uint64_t header_len = read_u64_le(bytes.data());
  if (header_len > bytes.size() - 8)
    throw Error(source + ": header length " + std::to_string(header_len) + " exceeds the file size " +
                std::to_string(bytes.size()) + " (truncated or not a safetensors file)");
  if (header_len > limits::kMaxSafetensorsHeaderBytes)
    throw Error(source + ": header length " + std::to_string(header_len) + " exceeds the limit of " +
                std::to_string(limits::kMaxSafetensorsHeaderBytes) + " bytes");
  const char* header_text = reinterpret_cast<const char*>(bytes.data()) + 8;
  const nlohmann::json header = parse_json(header_text, header_text + header_len, source + ": header");
  if (!header.is_object()) throw Error(source + ": header must be a JSON object, got " + header.type_name());
  const uint8_t* data = bytes.data() + 8 + header_len;
  const uint64_t data_len = bytes.size() - 8 - header_len;

  std::map<std::string, Constant> result;
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") {
      check_metadata(entry, source);
      continue;
    }
    const std::string where = source + ": tensor " + quoted_name(name);
    if (!entry.is_object() || !entry.contains("dtype") || !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array() || !entry.contains("data_offsets") || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
      throw Error(where + ": needs \"dtype\" (string), \"shape\" (list) and \"data_offsets\" ([begin, end]), got " +
                  json_excerpt(entry));
    const std::string dtype = entry["dtype"].get<std::string>();
    const std::optional<DType> type = file_dtype(dtype);
    if (!type)
      throw Error(where + ": unsupported dtype " + printable_name(dtype) +
                  " (F32, F16, BF16, F64, I8, U8, I32, I64, BOOL are read)");
    const std::size_t size = dtype_size(*type);
    Shape shape;
    for (const auto& d : entry["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0)
        throw Error(where + ": shape entries must be non-negative integers, got " + json_excerpt(entry["shape"]));
      shape.push_back(d.get<int64_t>());
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
      throw Error(where + ": data_offsets must be non-negative integers, got " + json_excerpt(offsets));
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (end < begin)
      throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  "] end before they begin");
    if (end > data_len)
      throw Error(where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                  "] lie outside the " + std::to_string(data_len) + " data bytes");
    // Computed without overflow: a lying shape must not wrap around to the byte count.
    const uint64_t needed = checked_tensor_bytes(shape, size, where);
    if (needed != end - begin)
      throw Error(where + ": " + std::to_string(end - begin) + " data bytes for " + dtype + shape_str(shape) +
                  ", which needs " + std::to_string(needed));
    ranges.emplace_back(begin, end);
    const auto count = static_cast<std::size_t>(needed / size);
    Constant c;
    c.type = TensorType{shape, *type};
    if (*type == DType::kFloat64) {  // nothing computes float64: narrowed to float32
      std::vector<float> values(count);
      for (std::size_t i = 0; i < count; ++i) {
        double v;
        std::memcpy(&v, data + begin + i * 8, 8);
        values[i] = static_cast<float>(v);
      }
      c = Constant::f32(shape, values);
    } else {
      c.data.assign(data + begin, data + end);
    }
    if (*type == DType::kBool)
      for (uint8_t b : c.data)
        if (b > 1) throw Error(where + ": BOOL value " + std::to_string(b) + " is neither 0 nor 1");
    result[name] = std::move(c);
  }
  check_no_overlap(ranges, source);
  return result;
}

std::map<std::string, Constant> read_safetensors(const std::string& path) {
  return parse_safetensors(read_file_bytes(path), path);
}

std::vector<uint8_t> serialize_safetensors(const std::map<std::string, Constant>& tensors,
                                           const std::map<std::string, std::string>& metadata) {
  nlohmann::ordered_json header;
  if (!metadata.empty()) {
    nlohmann::ordered_json meta = nlohmann::ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = meta;
  }
  uint64_t offset = 0;
  for (const auto& [name, c] : tensors) {
    if (name == "__metadata__") throw Error("tensor '__metadata__': the name is reserved by safetensors");
    if (!is_valid_utf8(name)) throw Error("tensor " + quoted_name(name) + ": the name is not valid UTF-8");
    if (c.data.size() != c.type.bytes())
      throw Error("tensor " + quoted_name(name) + " has " + std::to_string(c.data.size()) + " bytes of data for " + c.type.str());
    header[name] = {{"dtype", file_dtype_name(c.type.dtype)}, {"shape", c.type.shape}, {"data_offsets", {offset, offset + c.data.size()}}};
    offset += c.data.size();
  }
  std::string text = header.empty() ? std::string("{}") : header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // data starts 8-byte aligned
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>(static_cast<uint64_t>(text.size()) >> (8 * i));
  out += text;
  for (const auto& [name, c] : tensors) out.append(reinterpret_cast<const char*>(c.data.data()), c.data.size());
  return std::vector<uint8_t>(out.begin(), out.end());
}

Constant widen_to_float32(const Constant& c) {
  if (c.type.dtype == DType::kFloat32) return c;
  if (c.type.dtype != DType::kFloat16 && c.type.dtype != DType::kBFloat16)
    throw Error("a " + dtype_name(c.type.dtype) + " tensor is not widened to float32");
  const std::size_t n = c.data.size() / 2;
  std::vector<float> values(n);
  for (std::size_t i = 0; i < n; ++i) {
    const uint16_t bits = static_cast<uint16_t>(c.data[2 * i] | (c.data[2 * i + 1] << 8));
    if (c.type.dtype == DType::kFloat16) {
      values[i] = half_to_float(bits);
    } else {
      const uint32_t wide = static_cast<uint32_t>(bits) << 16;  // BF16 is the top half of a float32
      std::memcpy(&values[i], &wide, 4);
    }
  }
  return Constant::f32(c.type.shape, values);
}

void write_safetensors(const std::string& path, const std::map<std::string, Constant>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  write_file_atomic(path, serialize_safetensors(tensors, metadata));
}

}  // namespace hybgen
