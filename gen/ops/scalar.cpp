// Arithmetic with a constant scalar (MXNet's _plus_scalar, ...; the frontend's
// `x + 1.0f`). The r-forms put the scalar on the left: _rminus_scalar is s - x.
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

struct ScalarOp {
  const char* name;
  std::vector<std::string> aliases;
  const char* expression;  // C++ of the element {x} and the scalar {s}, as the kernel prints it
  float (*apply)(float x, float s);
  const char* vector_epilogue = nullptr;  // its epilogue object (OpDef::vector_epilogue), {s} the scalar
};

void register_scalar(const ScalarOp& op) {
  OpDef d;
  d.name = op.name;
  d.aliases = op.aliases;
  d.summary = std::string("elementwise ") + op.expression + " with a scalar";
  d.input_names = {"data"};
  d.attrs = {{"scalar", AttrKind::kFloat, 1.0, "the constant", {}},
             {"is_int", AttrKind::kBool, true, "MXNet >= 1.9 bookkeeping; ignored for float tensors", {}}};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  auto apply = op.apply;
  d.reference = [apply](const KernelIO& io) {
    const float s = static_cast<float>(io.attrs.get_float("scalar"));
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) io.out[0][i] = apply(io.in[0][i], s);
  };
  const std::string expression = op.expression;
  d.emit_scalar = [expression](const Attrs& a, const std::vector<std::string>& in) {
    return fill_operands(expression, {{"{x}", in[0]}, {"{s}", cpp_float(a.get_float("scalar"))}});
  };
  if (op.vector_epilogue) {
    const std::string object = op.vector_epilogue;
    d.vector_epilogue = [object](const Attrs& a) {
      return fill_operands(object, {{"{s}", cpp_float(a.get_float("scalar"))}});
    };
  }
  Attrs a, b;
  a.set("scalar", 2.5);
  b.set("scalar", -0.75);
  d.examples = {{a, {{3, 4}}}, {b, {{7}}}};
  OpRegistrar{std::move(d)};
}

const bool registered = [] {
  const ScalarOp ops[] = {
      {"_plus_scalar", {"_PlusScalar"}, "{x} + {s}", [](float x, float s) { return x + s; }},
      {"_minus_scalar", {"_MinusScalar"}, "{x} - {s}", [](float x, float s) { return x - s; }},
      {"_rminus_scalar", {"_RMinusScalar"}, "{s} - {x}", [](float x, float s) { return s - x; }},
      {"_mul_scalar", {"_MulScalar"}, "{x} * {s}", [](float x, float s) { return x * s; }, "HgScaleEpilogue({s})"},
      {"_div_scalar", {"_DivScalar"}, "{x} / {s}", [](float x, float s) { return x / s; }},
      {"_rdiv_scalar", {"_RDivScalar"}, "{s} / {x}", [](float x, float s) { return s / x; }},
      {"_maximum_scalar", {"_MaximumScalar"}, "{x} > {s} ? {x} : {s}", [](float x, float s) { return x > s ? x : s; }},
      {"_minimum_scalar", {"_MinimumScalar"}, "{x} < {s} ? {x} : {s}", [](float x, float s) { return x < s ? x : s; }},
  };
  for (const auto& op : ops) register_scalar(op);
  return true;
}();

}  // namespace
}  // namespace hybgen
