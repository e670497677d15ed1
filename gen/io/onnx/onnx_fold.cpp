// The ONNX ops that exist only at import, as sources of constants: Constant,
// Shape and Size of any value (every shape is known at import),
// ConstantOfShape and Range. Every other op whose inputs are all constants
// is evaluated at import by the one mechanism of io/onnx_ops.h (its runtime
// converter into a scratch graph, run by the registry's reference kernels),
// not here.
#include <algorithm>
#include <cmath>

#include "io/onnx/onnx_ops.h"
#include "ir/error.h"
#include "ir/limits.h"

namespace hybgen {
namespace {

constexpr int64_t kMaxElements = int64_t{1} << 22;

// Elements of a shape computed at import, refused past kMaxElements.
int64_t checked_count(OnnxContext& c, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) c.fail("negative dimension in " + shape_str(shape));
    if (d != 0 && n > kMaxElements / d)
      throw OnnxFoldTooLarge(c.where() + ": a tensor of shape " + shape_str(shape) + " is too large to compute at import");
    n *= d;
  }
  if (shape.size() > limits::kMaxRank) c.fail("rank " + std::to_string(shape.size()) + " is too large");
  return n;
}

// A Range's float value: float64 keeps double precision, the others float32's.
double round_float(double v, DType dtype) {
  return dtype == DType::kFloat64 ? v : static_cast<double>(static_cast<float>(v));
}

const OnnxConverterRegistrar constant_reg(OnnxConverter("Constant")
    .folds([](OnnxContext& c) {
          if (c.has_attr("value")) return c.set_constant(0, c.attr_tensor("value"));
          if (c.has_attr("value_float")) return c.set_constant(0, OnnxConst::scalar_float(c.attr_float("value_float", 0)));
          if (c.has_attr("value_floats")) {
            auto v = c.attr_floats("value_floats", {});
            return c.set_constant(0, OnnxConst::of_floats({static_cast<int64_t>(v.size())}, v));
          }
          if (c.has_attr("value_int")) return c.set_constant(0, OnnxConst::scalar_int(c.attr_int("value_int", 0)));
          if (c.has_attr("value_ints")) {
            auto v = c.attr_ints("value_ints", {});
            return c.set_constant(0, OnnxConst::of_ints({static_cast<int64_t>(v.size())}, v));
          }
          c.fail("has none of the attributes value, value_float(s), value_int(s) hybgen reads");
        })
    .handles({"value", "value_float", "value_floats", "value_int", "value_ints"})
    .checks([](OnnxCheck& k) {
          for (const char* a : {"sparse_value", "value_string", "value_strings"})
            if (k.has_attr(a)) k.refuse(a, "string and sparse constants are not supported");
        }));

// Shape (with start/end from opset 15) and Size read only the input's type.
const OnnxConverterRegistrar shape_reg(OnnxConverter("Shape")
    .folds([](OnnxContext& c) {
          const Shape s = c.shape(0);
          const int64_t rank = static_cast<int64_t>(s.size());
          auto clampi = [&](int64_t v) { return std::clamp(v < 0 ? v + rank : v, int64_t{0}, rank); };
          const int64_t start = clampi(c.attr_int("start", 0)), end = clampi(c.attr_int("end", rank));
          std::vector<int64_t> v;
          for (int64_t i = start; i < end; ++i) v.push_back(s[static_cast<std::size_t>(i)]);
          c.set_constant(0, OnnxConst::of_ints({static_cast<int64_t>(v.size())}, v));
        })
    .always_fold()
    .handles({"start", "end"}));

const OnnxConverterRegistrar size_reg(OnnxConverter("Size")
    .folds([](OnnxContext& c) { c.set_constant(0, OnnxConst::scalar_int(num_elements(c.shape(0)))); })
    .always_fold());

const OnnxConverterRegistrar constant_of_shape_reg(OnnxConverter("ConstantOfShape")
    .folds([](OnnxContext& c) {
          const std::vector<int64_t> dims = c.has_input(0) ? c.constant(0).as_ints() : std::vector<int64_t>{};
          const Shape shape(dims.begin(), dims.end());
          const int64_t n = checked_count(c, shape);
          OnnxConst value = c.has_attr("value") ? c.attr_tensor("value") : OnnxConst::scalar_float(0.0);
          if (value.size() != 1) c.fail("value must hold one element");
          OnnxConst out;
          out.dtype = value.dtype;
          out.shape = shape;
          if (out.is_float()) out.floats.assign(static_cast<std::size_t>(n), value.floats[0]);
          else out.ints.assign(static_cast<std::size_t>(n), value.ints[0]);
          c.set_constant(0, std::move(out));
        })
    .handles({"value"}));

const OnnxConverterRegistrar range_reg(OnnxConverter("Range")
    .folds([](OnnxContext& c) {
          const OnnxConst& s = c.constant(0);
          const OnnxConst& l = c.constant(1);
          const OnnxConst& d = c.constant(2);
          if (s.size() != 1 || l.size() != 1 || d.size() != 1) c.fail("start, limit and delta must be scalars");
          const double start = s.at_double(0), limit = l.at_double(0), delta = d.at_double(0);
          if (delta == 0) c.fail("delta is 0");
          const double count = std::max(std::ceil((limit - start) / delta), 0.0);
          if (!(count <= static_cast<double>(kMaxElements))) c.fail("the range is too long to compute at import");
          const int64_t n = static_cast<int64_t>(count);
          OnnxConst out;
          out.dtype = s.dtype;
          out.shape = {n};
          for (int64_t i = 0; i < n; ++i) {
            if (s.is_float()) out.floats.push_back(round_float(start + static_cast<double>(i) * delta, s.dtype));
            else  // wrapping, as the runtimes' int arithmetic
              out.ints.push_back(static_cast<int64_t>(static_cast<uint64_t>(s.ints[0]) +
                                                      static_cast<uint64_t>(i) * static_cast<uint64_t>(d.at_int(0))));
          }
          c.set_constant(0, std::move(out));
        }));

}  // namespace
}  // namespace hybgen
