#include "ops/op_util.h"

#include <cmath>
#include <cstdio>

#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {

std::function<std::optional<Constant>(const KernelSite&, int, const Constant&)> float32_packing(FloatPacking pack) {
  return [pack](const KernelSite& site, int index, const Constant& value) -> std::optional<Constant> {
    if (value.type.dtype != DType::kFloat32) return std::nullopt;
    std::optional<std::vector<float>> packed = pack(site, index, value.f32_data());
    if (!packed) return std::nullopt;
    return Constant::f32({static_cast<int64_t>(packed->size())}, *packed);
  };
}

void throw_no_arithmetic(DType dtype) {
  throw Error("no reference kernel computes in " + dtype_name(dtype) + " (only moves its elements)");
}

TensorType moved_values(const TensorType& in, Shape shape) {
  if (in.quantization.axis)
    throw Error("the input is quantized per axis (" + in.str() + "); ops that move values take it per tensor");
  return TensorType{std::move(shape), in.dtype, in.quantization};
}

const std::vector<DType>& moved_value_dtypes() {
  static const std::vector<DType> dtypes{DType::kFloat32, DType::kInt8, DType::kUInt8};
  return dtypes;
}

const std::vector<DType>& integer_dtypes() {
  static const std::vector<DType> v{DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64, DType::kBool};
  return v;
}

const std::vector<DType>& float32_and_integer_dtypes() {
  static const std::vector<DType> v{DType::kFloat32, DType::kInt8, DType::kUInt8, DType::kInt32, DType::kInt64,
                                    DType::kBool};
  return v;
}

int normalize_axis(int64_t axis, std::size_t rank) {
  const auto r = static_cast<int64_t>(rank);
  if (axis == kSliceNone) throw Error("axis None (the flattened input) is not supported here");
  if (axis < -r || axis >= r)
    throw Error("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return static_cast<int>(axis < 0 ? axis + r : axis);
}

bool is_first_axis(int64_t axis, std::size_t rank) {
  if (axis == kSliceNone) return true;
  const auto r = static_cast<int64_t>(rank);
  return axis == 0 || (r > 0 && axis == -r);
}

std::function<bool(const Attrs&, const std::vector<TensorType>&, const std::vector<bool>&)> mixes_along_axis_attr(
    const std::string& attr) {
  return [attr](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    return is_first_axis(a.get_int(attr), in[0].shape.size());
  };
}

Shape broadcast_shapes(const Shape& a, const Shape& b) {
  const std::size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw Error("shapes " + shape_str(a) + " and " + shape_str(b) + " cannot be broadcast together");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out) {
  std::vector<int64_t> strides(out.size(), 0);
  int64_t stride = 1;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    const std::size_t i = shape.size() - 1 - k;        // axis in `shape`
    const std::size_t o = out.size() - 1 - k;          // the same axis in `out`
    strides[o] = shape[i] == 1 ? 0 : stride;
    stride *= shape[i];
  }
  return strides;
}

int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end) {
  int64_t n = 1;
  for (std::size_t i = begin; i < end && i < shape.size(); ++i) n *= shape[i];
  return n;
}

AxisView axis_view(const Shape& shape, int64_t axis) {
  const int a = normalize_axis(axis, shape.size());
  return {dims_product(shape, 0, a), shape[a], dims_product(shape, a + 1, shape.size())};
}

std::string cpp_float(double value) {
  const float f = static_cast<float>(value);
  if (!std::isfinite(f)) throw Error("value " + std::to_string(value) + " is not a finite float32");
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s + "f";
}

std::string cpp_int_list(const std::vector<int64_t>& values) {
  std::string s = "{";
  for (std::size_t i = 0; i < values.size(); ++i) s += (i ? ", " : "") + std::to_string(values[i]);
  return s + "}";
}

std::string fill_operands(std::string expression, const std::vector<std::pair<std::string, std::string>>& operands) {
  for (const auto& [placeholder, operand] : operands)
    for (std::size_t at = expression.find(placeholder); at != std::string::npos;
         at = expression.find(placeholder, at + operand.size()))
      expression.replace(at, placeholder.size(), operand);
  return expression;
}

std::string epilogue_argument(const EmitContext& ctx) {
  return ctx.epilogue.empty() ? "HgNoEpilogue()" : ctx.epilogue;
}

}  // namespace hybgen
