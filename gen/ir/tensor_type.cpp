#include "ir/tensor_type.h"

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

bool is_float_dtype(DType dtype) {
  return dtype == DType::kFloat32 || dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat64;
}

bool is_storage_only_dtype(DType dtype) {
  return dtype == DType::kFloat64 || dtype == DType::kInt16 || dtype == DType::kUInt16 || dtype == DType::kUInt32 ||
         dtype == DType::kUInt64;
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

std::string TensorType::str() const { return dtype_name(dtype) + shape_str(shape); }

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
