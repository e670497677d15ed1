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

// Element types of graph values. Generated code computes float32 today;
// the others are values the importers evaluate at generation time (ONNX
// shape arithmetic in int64) and the types the next dtypes arrive in. kBool
// is its own type, not uint8: ONNX comparisons, Not and Where make and read
// it, and a Cast to it means "non-zero", where a Cast to uint8 wraps. It is
// stored as one byte holding 0 or 1.
//
// float64, int16, uint16, uint32 and uint64 are element types files hold
// (ONNX tensors and Casts) that nothing computes in: they are here so that
// the importers read and fold every numeric type in this one vocabulary, and
// a Cast to int16 wraps at 16 bits while one to float64 keeps double
// precision. No kernel declares them, so check_kernels refuses a graph value
// of one, and no reference computes arithmetic in them (those that only move
// elements serve every dtype): the ONNX importer evaluates them in float32,
// int32 or int64 at import.
enum class DType {
  kFloat32,
  kFloat16,
  kBFloat16,
  kInt8,
  kUInt8,
  kInt32,
  kInt64,
  kBool,
  kFloat64,
  kInt16,
  kUInt16,
  kUInt32,
  kUInt64
};

// Every dtype, in the enum's order.
const std::vector<DType>& all_dtypes();
// "float32", "float16", "bfloat16", "int8", "uint8", "int32", "int64", "bool",
// "float64", "int16", "uint16", "uint32", "uint64".
std::string dtype_name(DType dtype);
// Throws Error for a name that is not a supported dtype.
DType parse_dtype(const std::string& name);
std::size_t dtype_size(DType dtype);
// The C and C++ (and CUDA) type a value is stored as: "float", "uint16_t"
// (float16 and bfloat16 bits), "int8_t", "uint8_t", "int32_t", "int64_t",
// "bool", "double", "int16_t", "uint16_t", "uint32_t", "uint64_t".
std::string dtype_c_type(DType dtype);
bool is_float_dtype(DType dtype);  // float32, float16, bfloat16, float64
// float64, int16, uint16, uint32, uint64: read from files and folded at
// import, never computed by a kernel or a reference.
bool is_storage_only_dtype(DType dtype);

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
