// Shapes and element types of graph values.
//
//   TensorType t{{1, 512}, DType::kFloat32};
//   t.num_elements();  // 512
//   t.bytes();         // 2048
//   TensorType q{{1, 512}, DType::kInt8, Quantization::per_tensor(0.05f, -3)};
//   q.str();           // "int8(1, 512) scale 0.05 zero point -3"
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
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
// "float32, int64": the names, comma-separated, for messages.
std::string dtype_names(const std::vector<DType>& dtypes);
// Throws Error for a name that is not a supported dtype.
DType parse_dtype(const std::string& name);
std::size_t dtype_size(DType dtype);
// The C and C++ (and CUDA) type a value is stored as: "float", "uint16_t"
// (float16 and bfloat16 bits), "int8_t", "uint8_t", "int32_t", "int64_t",
// "bool", "double", "int16_t", "uint16_t", "uint32_t", "uint64_t".
std::string dtype_c_type(DType dtype);
bool is_float_dtype(DType dtype);  // float32, float16, bfloat16, float64
// float16 and bfloat16: the half-precision storage of --precision fp16/bf16.
bool is_half_dtype(DType dtype);
// float64, int16, uint16, uint32, uint64: read from files and folded at
// import, never computed by a kernel or a reference.
bool is_storage_only_dtype(DType dtype);
// int8, uint8, int16, int32, int64: the dtypes a Quantization may describe.
bool is_integer_dtype(DType dtype);
// The smallest and largest value of those integer dtypes (or of bool: 0 and 1).
std::pair<int64_t, int64_t> integer_dtype_range(DType dtype);

// The shortest text that reads back as the same float ("0.05", not
// "0.0500000007"): how scales are printed and written to JSON.
std::string shortest_float_text(float value);

using Shape = std::vector<int64_t>;

int64_t num_elements(const Shape& shape);
// "(1, 512)" — as numpy and Gluon print shapes.
std::string shape_str(const Shape& shape);
// Elements x element_size in bytes, or nothing when that overflows 64 bits:
// how readers check sizes claimed by untrusted files.
std::optional<uint64_t> checked_bytes(const Shape& shape, std::size_t element_size);

// Affine quantization of an integer tensor: element q stands for the real
// number scale * (q - zero_point) (TFLite's and ONNX's scheme). Per tensor:
// one scale and one zero point. Per axis: one of each for every index along
// `axis` (the output channels of a weight). An empty `scale` means the
// values are not quantized.
struct Quantization {
  std::vector<float> scale;
  std::vector<int64_t> zero_point;
  std::optional<int> axis;  // unset: per tensor

  static Quantization per_tensor(float scale, int64_t zero_point);
  static Quantization per_axis(int axis, std::vector<float> scales, std::vector<int64_t> zero_points);
  bool empty() const { return scale.empty(); }
  // "scale 0.05 zero point -3"; per axis "scales (16,) on axis 0, zero points 0".
  std::string str() const;
  bool operator==(const Quantization& other) const {
    return scale == other.scale && zero_point == other.zero_point && axis == other.axis;
  }
  bool operator!=(const Quantization& other) const { return !(*this == other); }
};

struct TensorType {
  Shape shape;
  DType dtype = DType::kFloat32;
  Quantization quantization;  // empty unless the values are quantized integers

  TensorType() = default;
  TensorType(Shape shape_, DType dtype_ = DType::kFloat32, Quantization quantization_ = {})
      : shape(std::move(shape_)), dtype(dtype_), quantization(std::move(quantization_)) {}

  int64_t num_elements() const { return hybgen::num_elements(shape); }
  std::size_t bytes() const { return static_cast<std::size_t>(num_elements()) * dtype_size(dtype); }
  std::string str() const;  // "float32(1, 512)"; a quantized type adds its Quantization's str()
  bool operator==(const TensorType& other) const {
    return shape == other.shape && dtype == other.dtype && quantization == other.quantization;
  }
  bool operator!=(const TensorType& other) const { return !(*this == other); }
};

// Throws Error, prefixed by `where`, unless `type`'s quantization is empty or
// valid for it: an integer dtype; scales finite and positive; zero points
// within the dtype's range; per tensor one of each, per axis an axis of the
// shape and one of each per index along it.
void check_quantization(const TensorType& type, const std::string& where);

}  // namespace hybgen
