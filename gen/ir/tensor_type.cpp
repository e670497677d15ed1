#include "ir/tensor_type.h"

#include <charconv>
#include <cmath>
#include <limits>

#include "ir/error.h"

namespace hybgen {

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  std::size_t size;
  const char* c_type;
};

constexpr DTypeInfo kDTypes[] = {
    {DType::kFloat32, "float32", 4, "float"},      {DType::kFloat16, "float16", 2, "uint16_t"},
    {DType::kBFloat16, "bfloat16", 2, "uint16_t"}, {DType::kInt8, "int8", 1, "int8_t"},
    {DType::kUInt8, "uint8", 1, "uint8_t"},        {DType::kInt32, "int32", 4, "int32_t"},
    {DType::kInt64, "int64", 8, "int64_t"},        {DType::kBool, "bool", 1, "bool"},
    {DType::kFloat64, "float64", 8, "double"},     {DType::kInt16, "int16", 2, "int16_t"},
    {DType::kUInt16, "uint16", 2, "uint16_t"},     {DType::kUInt32, "uint32", 4, "uint32_t"},
    {DType::kUInt64, "uint64", 8, "uint64_t"},
};

const DTypeInfo& info(DType dtype) {
  for (const DTypeInfo& i : kDTypes)
    if (i.dtype == dtype) return i;
  throw Error("dtype " + std::to_string(static_cast<int>(dtype)) + " is not a DType");
}

}  // namespace

const std::vector<DType>& all_dtypes() {
  static const std::vector<DType> all = [] {
    std::vector<DType> v;
    for (const DTypeInfo& i : kDTypes) v.push_back(i.dtype);
    return v;
  }();
  return all;
}

std::string dtype_name(DType dtype) { return info(dtype).name; }

std::string dtype_names(const std::vector<DType>& dtypes) {
  std::string names;
  for (DType d : dtypes) names += (names.empty() ? "" : ", ") + dtype_name(d);
  return names;
}

DType parse_dtype(const std::string& name) {
  std::string names;
  for (const DTypeInfo& i : kDTypes) {
    if (name == i.name) return i.dtype;
    names += (names.empty() ? "" : ", ") + std::string(i.name);
  }
  throw Error("unsupported dtype '" + name + "' (supported: " + names + ")");
}

std::size_t dtype_size(DType dtype) { return info(dtype).size; }

std::string dtype_c_type(DType dtype) { return info(dtype).c_type; }

bool is_half_dtype(DType dtype) { return dtype == DType::kFloat16 || dtype == DType::kBFloat16; }

bool is_float_dtype(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat64;
}

bool is_storage_only_dtype(DType dtype) {
  return dtype == DType::kFloat64 || dtype == DType::kInt16 || dtype == DType::kUInt16 || dtype == DType::kUInt32 ||
         dtype == DType::kUInt64;
}

bool is_integer_dtype(DType dtype) {
  return dtype == DType::kInt8 || dtype == DType::kUInt8 || dtype == DType::kInt16 || dtype == DType::kInt32 ||
         dtype == DType::kInt64;
}

std::pair<int64_t, int64_t> integer_dtype_range(DType dtype) {
  switch (dtype) {
    case DType::kInt8: return {-128, 127};
    case DType::kUInt8: return {0, 255};
    case DType::kInt16: return {-32768, 32767};
    case DType::kInt32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::kInt64: return {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max()};
    case DType::kBool: return {0, 1};
    default: throw Error("integer_dtype_range: " + dtype_name(dtype) + " is not an integer dtype");
  }
}

int64_t num_elements(const Shape& shape) {
  // A zero dimension empties the tensor whatever the others claim, and is
  // found first so that their product cannot overflow on the way.
  for (int64_t d : shape)
    if (d == 0) return 0;
  uint64_t n = 1;  // shapes past the limits are refused by checked_tensor_bytes before they get here
  for (int64_t d : shape) n *= static_cast<uint64_t>(d);
  return static_cast<int64_t>(n);
}

std::string shape_str(const Shape& shape) {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::string shortest_float_text(float value) {
  char text[32];
  const auto end = std::to_chars(text, text + sizeof text, value).ptr;
  return std::string(text, end);
}

Quantization Quantization::per_tensor(float scale, int64_t zero_point) {
  Quantization q;
  q.scale = {scale};
  q.zero_point = {zero_point};
  return q;
}

Quantization Quantization::per_axis(int axis, std::vector<float> scales, std::vector<int64_t> zero_points) {
  Quantization q;
  q.scale = std::move(scales);
  q.zero_point = std::move(zero_points);
  q.axis = axis;
  return q;
}

std::string Quantization::str() const {
  if (empty()) return "not quantized";
  if (!axis) return "scale " + shortest_float_text(scale[0]) + " zero point " + std::to_string(zero_point[0]);
  bool one_zero_point = true;
  for (int64_t z : zero_point) one_zero_point = one_zero_point && z == zero_point[0];
  return "scales (" + std::to_string(scale.size()) + ",) on axis " + std::to_string(*axis) +
         (one_zero_point ? ", zero points " + std::to_string(zero_point[0]) : ", zero points per index");
}

std::string TensorType::str() const {
  return dtype_name(dtype) + shape_str(shape) + (quantization.empty() ? "" : " " + quantization.str());
}

void check_quantization(const TensorType& type, const std::string& where) {
  const Quantization& q = type.quantization;
  if (q.empty()) {
    if (!q.zero_point.empty() || q.axis) throw Error(where + ": a quantization needs a scale");
    return;
  }
  if (!is_integer_dtype(type.dtype))
    throw Error(where + ": only integer values are quantized, not " + dtype_name(type.dtype));
  std::size_t count = 1;
  if (q.axis) {
    if (*q.axis < 0 || *q.axis >= static_cast<int>(type.shape.size()))
      throw Error(where + ": quantization axis " + std::to_string(*q.axis) + " is not an axis of shape " +
                  shape_str(type.shape));
    count = static_cast<std::size_t>(type.shape[static_cast<std::size_t>(*q.axis)]);
  }
  if (q.scale.size() != count || q.zero_point.size() != count)
    throw Error(where + ": quantization " +
                (q.axis ? "on axis " + std::to_string(*q.axis) + " of shape " + shape_str(type.shape) + " needs "
                        : "per tensor needs ") +
                std::to_string(count) + " scales and zero points, got " + std::to_string(q.scale.size()) + " and " +
                std::to_string(q.zero_point.size()));
  for (float s : q.scale)
    if (!std::isfinite(s) || s <= 0.0f)
      throw Error(where + ": quantization scale " + shortest_float_text(s) + " is not a finite positive number");
  const auto [lo, hi] = integer_dtype_range(type.dtype);
  for (int64_t z : q.zero_point)
    if (z < lo || z > hi)
      throw Error(where + ": zero point " + std::to_string(z) + " is outside " + dtype_name(type.dtype) + "'s range [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

std::optional<uint64_t> checked_bytes(const Shape& shape, std::size_t element_size) {
  uint64_t total = element_size;
  for (int64_t d : shape) {
    const auto dim = static_cast<uint64_t>(d);
    if (dim != 0 && total > UINT64_MAX / dim) return std::nullopt;
    total *= dim;
  }
  return total;
}

}  // namespace hybgen
