// Import-time evaluation: the ONNX ops that compute shapes and indices
// (what torch.onnx.export writes around Reshape, Flatten and view) evaluated
// on OnnxConst values when their inputs are constants, and Constant nodes.
#include "io/onnx_ops.h"
#include "ir/error.h"

namespace hybgen {
namespace {

const OnnxConverterRegistrar constant_reg(OnnxConverter{
    .op_type = "Constant",
    .fold =
        [](OnnxContext& c) {
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
        },
    .attrs = {"value", "value_float", "value_floats", "value_int", "value_ints"},
});

}  // namespace
}  // namespace hybgen
