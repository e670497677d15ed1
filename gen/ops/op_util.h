// Small helpers shared by the op definitions in gen/ops/: axis and shape
// arithmetic, and printing C++ literals for generated code.
#pragma once

#include <climits>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/tensor_type.h"
#include "ops/op_kernel.h"

namespace hybgen {

struct EmitContext;

// MXNet's None inside an int tuple (slice's begin=(0, None)); JSON null.
constexpr int64_t kSliceNone = INT64_MIN;

// The bytes of one float32 value: what the float32 kernels' scratch sizes
// (OpKernel::scratch_bytes) count in.
constexpr int64_t kFloatBytes = sizeof(float);

// The OpKernel::pack_constant of a float32 kernel whose packing `pack`
// re-lays out floats (nullopt: keeps the input as it is).
using FloatPacking = std::optional<std::vector<float>> (*)(const KernelSite& site, int index, const float* data);
std::function<std::optional<Constant>(const KernelSite&, int, const Constant&)> float32_packing(FloatPacking pack);

// Normalises a possibly negative axis against `rank`; Error when out of range.
int normalize_axis(int64_t axis, std::size_t rank);

// Whether `axis` (negative from the end; kSliceNone: every axis, the
// flattened input) is or includes the first axis of a tensor of `rank`:
// what OpDef::mixes_first_axis asks of ops working along one axis.
bool is_first_axis(int64_t axis, std::size_t rank);
// The OpDef::mixes_first_axis of an op working along the axis its int
// attribute `attr` names, over input 0.
std::function<bool(const Attrs&, const std::vector<TensorType>&, const std::vector<bool>&)> mixes_along_axis_attr(
    const std::string& attr);

// Numpy broadcasting of two shapes; Error when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Element strides of `shape` seen through a broadcast to `out` (0 on
// broadcast dims), right-aligned to out's rank.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out);

// Product of shape[begin, end).
int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end);

// A shape seen as [outer, n, inner] around one axis: the layout that softmax,
// LayerNorm and L2Normalization reduce along (n).
struct AxisView {
  int64_t outer, n, inner;
};

// The view of `shape` around `axis` (negative counts from the end); Error
// when the axis is out of range.
AxisView axis_view(const Shape& shape, int64_t axis);

// Walks the elements of `dims` in row-major order and calls f(i, a, b):
// i is the element's position, a and b its offsets through `strides_a` and
// `strides_b` (one stride per axis; 0 along broadcast or reduced axes). The
// reference kernels of broadcast, transpose, slice and reduce share it.
template <typename F>
void for_each_strided(const Shape& dims, const std::vector<int64_t>& strides_a, const std::vector<int64_t>& strides_b,
                      F&& f) {
  const int64_t n = num_elements(dims);
  if (dims.empty()) {
    f(0, 0, 0);
    return;
  }
  if (n == 0) return;
  // The last axis as an inner loop, so the offsets of the others are summed
  // once per row rather than once per element.
  const std::size_t last = dims.size() - 1;
  const int64_t inner = dims[last], step_a = strides_a[last], step_b = strides_b.empty() ? 0 : strides_b[last];
  std::vector<int64_t> index(last, 0);
  for (int64_t i = 0; i < n; i += inner) {
    int64_t a = 0, b = 0;
    for (std::size_t d = 0; d < last; ++d) {
      a += index[d] * strides_a[d];
      if (!strides_b.empty()) b += index[d] * strides_b[d];
    }
    for (int64_t j = 0; j < inner; ++j) f(i + j, a + j * step_a, b + j * step_b);
    for (int d = static_cast<int>(last) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

// Calls f(T{}) with T an unsigned integer type as wide as one element of
// `dtype`: how reference kernels that only move elements (reshape,
// transpose, slice, concat, take, broadcast_to, where) serve every dtype.
template <typename F>
void with_element_bits(DType dtype, F&& f) {
  switch (dtype_size(dtype)) {
    case 1: f(uint8_t{}); break;
    case 2: f(uint16_t{}); break;
    case 4: f(uint32_t{}); break;
    default: f(uint64_t{}); break;
  }
}

// Error("no reference computes in DTYPE"): with_value_type's refusal.
[[noreturn]] void throw_no_arithmetic(DType dtype);

// Calls f(T{}) with T the C++ type of `dtype`'s values (float, int8_t,
// uint8_t, int32_t, int64_t, bool): how reference kernels that compute on
// values serve the dtypes they list. Error for float16 and bfloat16, which
// no reference computes in.
template <typename F>
void with_value_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kFloat32: f(float{}); break;
    case DType::kInt8: f(int8_t{}); break;
    case DType::kUInt8: f(uint8_t{}); break;
    case DType::kInt32: f(int32_t{}); break;
    case DType::kInt64: f(int64_t{}); break;
    case DType::kBool: f(bool{}); break;
    default: throw_no_arithmetic(dtype);
  }
}
// The output type of an op that only moves values (reshape, transpose,
// slice, pad): `in`'s dtype and per-tensor quantization under `shape`.
// Error for a per-axis quantization, whose scales the move would not carry.
TensorType moved_values(const TensorType& in, Shape shape);
// The dtypes of such an op's C++ kernel: float32 and the quantized int8 and
// uint8 (moving bytes is exact in any quantization).
const std::vector<DType>& moved_value_dtypes();

// The integer dtypes (int8, uint8, int32, int64) and with them bool.
const std::vector<DType>& integer_dtypes();
// float32 and integer_dtypes(): what the integer-capable references list.
const std::vector<DType>& float32_and_integer_dtypes();

// `expression` with each placeholder ("{x}") replaced by its operand: how
// elementwise ops write their OpDef::emit_scalar.
std::string fill_operands(std::string expression, const std::vector<std::pair<std::string, std::string>>& operands);

// The epilogue a kernel call passes (templates/kernels/epilogue.inc): the
// fused one in scope, or HgNoEpilogue().
std::string epilogue_argument(const EmitContext& ctx);

// A float literal that reads back as the same float: "0.5f", "-1e-05f".
std::string cpp_float(double value);

// An integer in decimal, as printed into kernel calls.
inline std::string int_str(int64_t value) { return std::to_string(value); }
// "{1, 2, 3}"
std::string cpp_int_list(const std::vector<int64_t>& values);

}  // namespace hybgen
