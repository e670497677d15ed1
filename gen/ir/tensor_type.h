// Shapes and element types of graph values.
//
//   TensorType t{{1, 512}, DType::kFloat32};
//   t.num_elements();  // 512
//   t.bytes();         // 2048
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace hybgen {

// Only float32 is computed today; the field exists so readers can name others.
enum class DType { kFloat32 };

std::string dtype_name(DType dtype);
// Throws Error for a name that is not a supported dtype.
DType parse_dtype(const std::string& name);
std::size_t dtype_size(DType dtype);
// The C and C++ (and CUDA) type generated code stores it as: "float".
std::string dtype_c_type(DType dtype);

using Shape = std::vector<int64_t>;

int64_t num_elements(const Shape& shape);
// "(1, 512)" — as numpy and Gluon print shapes.
std::string shape_str(const Shape& shape);
// Elements x element_size in bytes, or nothing when that overflows 64 bits:
// how readers check sizes claimed by untrusted files.
std::optional<uint64_t> checked_bytes(const Shape& shape, std::size_t element_size);

struct TensorType {
  Shape shape;
  DType dtype = DType::kFloat32;

  int64_t num_elements() const { return hybgen::num_elements(shape); }
  std::size_t bytes() const { return static_cast<std::size_t>(num_elements()) * dtype_size(dtype); }
  std::string str() const;  // "float32(1, 512)"
  bool operator==(const TensorType& other) const { return shape == other.shape && dtype == other.dtype; }
  bool operator!=(const TensorType& other) const { return !(*this == other); }
};

}  // namespace hybgen
