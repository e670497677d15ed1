#include "ir/tensor_type.h"

#include "ir/error.h"

namespace hybgen {

std::string dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float32";
  }
  return "unknown";
}

DType parse_dtype(const std::string& name) {
  if (name == "float32") return DType::kFloat32;
  throw Error("unsupported dtype '" + name + "' (supported: float32)");
}

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return 4;
  }
  return 0;
}

std::string dtype_c_type(DType dtype) {
  switch (dtype) {
    case DType::kFloat32: return "float";
  }
  return "void";
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
