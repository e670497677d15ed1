// Reader and writer for MXNet .params. Every multi-byte field is decoded
// explicitly as little-endian (files from x86 and ARM are), without assuming
// alignment, and every length is checked against the bytes left.
#include "io/mxnet/mxnet_params.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "io/file_util.h"
#include "ir/error.h"
#include "ir/half.h"
#include "ir/limits.h"
#include "ir/names.h"

namespace hybgen {

std::optional<DType> mshadow_dtype(int32_t flag) {
  switch (flag) {
    case 0: return DType::kFloat32;
    case 1: return DType::kFloat64;
    case 2: return DType::kFloat16;
    case 3: return DType::kUInt8;
    case 4: return DType::kInt32;
    case 5: return DType::kInt8;
    case 6: return DType::kInt64;
    default: return std::nullopt;
  }
}

namespace {

constexpr uint64_t kListMagic = 0x112;
constexpr uint32_t kV1Magic = 0xF993FAC8;
constexpr uint32_t kV2Magic = 0xF993FAC9;
constexpr uint32_t kV3Magic = 0xF993FACA;

class Reader {
 public:
  Reader(const std::vector<uint8_t>& bytes, const std::string& source) : bytes_(bytes), source_(source) {}

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T value = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      value |= static_cast<T>(static_cast<T>(bytes_[pos_ + i]) << (8 * i));
    pos_ += sizeof(T);
    return value;
  }
  const uint8_t* take(std::size_t n, const char* what) {
    need(n, what);
    const uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::size_t pos() const { return pos_; }
  std::size_t left() const { return bytes_.size() - pos_; }
  [[noreturn]] void fail(const std::string& message) const {
    throw Error(source_ + ": " + message + " (at byte " + std::to_string(pos_) + ")");
  }

 private:
  void need(std::size_t n, const char* what) const {
    if (n > left())
      fail(std::string("truncated: ") + what + " needs " + std::to_string(n) + " bytes, " + std::to_string(left()) +
           " left");
  }
  const std::vector<uint8_t>& bytes_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

// One little-endian element of `dtype` as float32 (weights are float32).
float element_to_float(DType dtype, const uint8_t* p) {
  auto load = [p](auto zero) {
    decltype(zero) v;
    std::memcpy(&v, p, sizeof v);
    return v;
  };
  switch (dtype) {
    case DType::kFloat32: return load(float{});
    case DType::kFloat64: return static_cast<float>(load(double{}));
    case DType::kFloat16: return half_to_float(load(uint16_t{}));
    case DType::kUInt8: return static_cast<float>(load(uint8_t{}));
    case DType::kInt32: return static_cast<float>(load(int32_t{}));
    case DType::kInt8: return static_cast<float>(load(int8_t{}));
    case DType::kInt64: return static_cast<float>(load(int64_t{}));
    default: throw Error("no float32 conversion of " + dtype_name(dtype));  // mshadow_dtype gives none other
  }
}

Constant read_record(Reader& r, std::size_t index) {
  const std::string which = "array " + std::to_string(index);
  const uint32_t first = r.read<uint32_t>("record magic");
  Shape shape;
  bool empty = false;
  if (first == kV2Magic || first == kV3Magic) {
    const int32_t storage = static_cast<int32_t>(r.read<uint32_t>("storage type"));
    if (storage != 0)
      r.fail(which + ": sparse storage type " + std::to_string(storage) + " is not supported (dense only)");
    const int32_t ndim = static_cast<int32_t>(r.read<uint32_t>("ndim"));
    if (ndim < -1 || ndim > 32) r.fail(which + ": implausible ndim " + std::to_string(ndim));
    // V2: ndim 0 is an empty array; V3: -1 is unknown/empty, 0 a scalar.
    empty = first == kV2Magic ? ndim == 0 : ndim == -1;
    for (int32_t i = 0; i < ndim; ++i) shape.push_back(static_cast<int64_t>(r.read<uint64_t>("dim")));
  } else if (first == kV1Magic) {
    const uint32_t ndim = r.read<uint32_t>("ndim");
    if (ndim > 32) r.fail(which + ": implausible ndim " + std::to_string(ndim));
    empty = ndim == 0;
    for (uint32_t i = 0; i < ndim; ++i) shape.push_back(static_cast<int64_t>(r.read<uint64_t>("dim")));
  } else {
    // Legacy record: no magic, the word read is ndim, dims are uint32.
    if (first > 32) r.fail(which + ": unknown record magic 0x" + [&] {
      char buf[16];
      std::snprintf(buf, sizeof buf, "%08X", first);
      return std::string(buf);
    }() + " (not an MXNet NDArray)");
    empty = first == 0;
    for (uint32_t i = 0; i < first; ++i) shape.push_back(r.read<uint32_t>("dim"));
  }
  Constant c;
  if (empty) return c;
  for (int64_t d : shape)
    if (d < 0) r.fail(which + ": implausible dim " + std::to_string(static_cast<uint64_t>(d)));
  r.read<uint32_t>("context device type");
  r.read<uint32_t>("context device id");
  const int32_t flag = static_cast<int32_t>(r.read<uint32_t>("dtype"));
  const std::optional<DType> dtype = mshadow_dtype(flag);
  if (!dtype) r.fail(which + ": unsupported dtype flag " + std::to_string(flag));
  const std::size_t size = dtype_size(*dtype);
  uint64_t bytes = 0;
  try {
    bytes = checked_tensor_bytes(shape, size, which);
  } catch (const Error& e) {
    r.fail(e.what());
  }
  const uint64_t n = bytes / size;
  if (bytes > r.left())
    r.fail("truncated: " + which + " of shape " + shape_str(shape) + " needs " + std::to_string(bytes) +
           " data bytes, " + std::to_string(r.left()) + " left");
  const uint8_t* data = r.take(static_cast<std::size_t>(n) * size, "data");
  std::vector<float> values(static_cast<std::size_t>(n));
  for (uint64_t i = 0; i < n; ++i) values[i] = element_to_float(*dtype, data + i * size);
  return Constant::f32(shape, values);
}

void put_u32(std::vector<uint8_t>& out, uint32_t v) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}
void put_u64(std::vector<uint8_t>& out, uint64_t v) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(v >> (8 * i)));
}

}  // namespace

std::map<std::string, Constant> parse_mxnet_params(const std::vector<uint8_t>& bytes, const std::string& source) {
  Reader r(bytes, source);
  const uint64_t magic = r.read<uint64_t>("list magic");
  if (magic != kListMagic) r.fail("wrong magic: not an MXNet .params file (expected 0x112 at the start)");
  r.read<uint64_t>("reserved");
  const uint64_t count = r.read<uint64_t>("array count");
  if (count > r.left() / 4)
    r.fail("truncated: " + std::to_string(count) + " arrays cannot fit in the " + std::to_string(r.left()) + " bytes left");
  std::vector<Constant> arrays;
  for (uint64_t i = 0; i < count; ++i) arrays.push_back(read_record(r, i));
  const uint64_t name_count = r.read<uint64_t>("name count");
  if (name_count != count)
    r.fail("has " + std::to_string(count) + " arrays but " + std::to_string(name_count) +
           " names (an unnamed list cannot be matched to a graph)");
  std::map<std::string, Constant> result;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t length = r.read<uint64_t>("name length");
    if (length > r.left()) r.fail("truncated: name " + std::to_string(i) + " of " + std::to_string(length) + " bytes");
    const uint8_t* p = r.take(static_cast<std::size_t>(length), "name");
    std::string name(reinterpret_cast<const char*>(p), static_cast<std::size_t>(length));
    if (!is_valid_utf8(name)) r.fail("name " + std::to_string(i) + " (" + quoted_name(name) + ") is not valid UTF-8");
    if (!result.emplace(name, std::move(arrays[i])).second) r.fail("name " + quoted_name(name) + " appears twice");
  }
  return result;
}

std::map<std::string, Constant> read_mxnet_params(const std::string& path) {
  return parse_mxnet_params(read_file_bytes(path), path);
}

std::vector<uint8_t> serialize_mxnet_params(const std::map<std::string, Constant>& tensors, MxnetRecordLayout layout) {
  std::vector<uint8_t> out;
  put_u64(out, kListMagic);
  put_u64(out, 0);
  put_u64(out, tensors.size());
  for (const auto& [name, c] : tensors) {
    const Shape& shape = c.type.shape;
    switch (layout) {
      case MxnetRecordLayout::kV2:
      case MxnetRecordLayout::kV3:
        put_u32(out, layout == MxnetRecordLayout::kV2 ? kV2Magic : kV3Magic);
        put_u32(out, 0);  // dense
        put_u32(out, static_cast<uint32_t>(shape.size()));
        for (int64_t d : shape) put_u64(out, static_cast<uint64_t>(d));
        break;
      case MxnetRecordLayout::kV1:
        put_u32(out, kV1Magic);
        put_u32(out, static_cast<uint32_t>(shape.size()));
        for (int64_t d : shape) put_u64(out, static_cast<uint64_t>(d));
        break;
      case MxnetRecordLayout::kLegacy:
        put_u32(out, static_cast<uint32_t>(shape.size()));
        for (int64_t d : shape) put_u32(out, static_cast<uint32_t>(d));
        break;
    }
    put_u32(out, 1);  // cpu
    put_u32(out, 0);  // device 0
    put_u32(out, 0);  // float32
    out.insert(out.end(), c.data.begin(), c.data.end());
  }
  put_u64(out, tensors.size());
  for (const auto& [name, c] : tensors) {
    put_u64(out, name.size());
    out.insert(out.end(), name.begin(), name.end());
  }
  return out;
}

void write_mxnet_params(const std::string& path, const std::map<std::string, Constant>& tensors,
                        MxnetRecordLayout layout) {
  write_file_atomic(path, serialize_mxnet_params(tensors, layout));
}

}  // namespace hybgen
