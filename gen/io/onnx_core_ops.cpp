// ONNX converters for the plain ops: each maps one ONNX op type onto
// registry ops (gen/ops/), following the ONNX operator spec per opset.
#include <cmath>

#include "io/onnx_ops.h"
#include "ir/error.h"

namespace hybgen {
namespace {

Attrs act(const std::string& type) {
  Attrs a;
  a.set("act_type", type);
  return a;
}

const OnnxConverterRegistrar relu_reg(OnnxConverter{
    .op_type = "Relu",
    .convert = [](OnnxContext& c) { c.set_output(0, c.add_node("Activation", act("relu"), {c.input(0)})); },
});

}  // namespace
}  // namespace hybgen
