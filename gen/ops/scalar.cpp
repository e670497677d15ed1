// Arithmetic with a constant scalar (MXNet's _plus_scalar, ...; the frontend's
// `x + 1.0f`). The r-forms put the scalar on the left: _rminus_scalar is s - x.
// Comparisons and logical ops give 1.0f where true and 0.0f where not, in
// the input's dtype (as MXNet's do for float tensors). On quantized data,
// with an output scale of its own, each is a lookup table of its reference
// (ops/quantized.h).
#include <cmath>

#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

struct ScalarOp {
  const char* name;
  std::vector<std::string> aliases;
  const char* expression;  // C++ of the element {x} and the scalar {s}, as the kernel prints it
  float (*apply)(float x, float s);
  const char* vector_epilogue = nullptr;  // its epilogue object (OpKernel::vector_epilogue), {s} the scalar
  // The expression for particular scalars (x^2 as x * x), else `expression`.
  std::string (*special)(double s) = nullptr;
  bool positive_input = false;                 // random test data in (0.1, 2): a power's base
  std::vector<double> example_scalars = {2.5, -0.75};
};

void register_scalar(const ScalarOp& op) {
  OpDef d;
  d.name = op.name;
  d.aliases = op.aliases;
  d.summary = std::string("elementwise ") + op.expression + " with a scalar";
  d.input_names = {"data"};
  d.attrs = with_output_quantization(
      {{"scalar", AttrKind::kFloat, 1.0, "the constant", {}},
       {"is_int", AttrKind::kBool, true, "MXNet >= 1.9 bookkeeping; ignored for float tensors", {}}});
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{table_or_same_output(a, in[0], false)};
  };
  auto apply = op.apply;
  // x -> apply(x, s), s rounded to float as the float kernel has it.
  auto with_scalar = [apply](const Attrs& a) -> ElementFunction {
    const float s = static_cast<float>(a.get_float("scalar"));
    return [apply, s](float x) { return apply(x, s); };
  };
  d.reference = [apply, with_scalar](const KernelIO& io) {
    if (has_output_quantization(io.attrs)) return lookup_table_reference(io, with_scalar(io.attrs));
    const float s = static_cast<float>(io.attrs.get_float("scalar"));
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) io.output<float>(0)[i] = apply(io.input<float>(0)[i], s);
  };
  const std::string expression = op.expression;
  auto special = op.special;
  d.emit_scalar = [expression, special, with_scalar](const ScalarSite& site) {
    if (has_output_quantization(site.attrs)) return lookup_table_scalar(site, with_scalar(site.attrs));
    // The scalar as the reference sees it: rounded to float.
    const double s = static_cast<float>(site.attrs.get_float("scalar"));
    const std::string e = special ? special(s) : "";
    return fill_operands(e.empty() ? expression : e,
                         {{"{x}", site.in[0]}, {"{s}", cpp_float(site.attrs.get_float("scalar"))}});
  };
  if (op.vector_epilogue) {
    const std::string object = op.vector_epilogue;
    OpKernel cpp;
    cpp.vector_epilogue = [object](const Attrs& a) {
      return fill_operands(object, {{"{s}", cpp_float(a.get_float("scalar"))}});
    };
    register_kernel(Backend::kCpp, op.name, std::move(cpp));
  }
  if (op.positive_input) d.input_ranges = {positive_input(0)};
  const Shape shapes[] = {{3, 4}, {7}, {2, 3, 5}, {1}};
  for (std::size_t i = 0; i < op.example_scalars.size(); ++i) {
    Attrs a;
    a.set("scalar", op.example_scalars[i]);
    d.examples.push_back({a, {shapes[i % 4]}});
  }
  // Quantized (a table), int8 and uint8.
  Attrs a;
  a.set("scalar", op.example_scalars[0]);
  const float in_scale = op.positive_input ? 0.008f : 0.016f;
  d.examples.push_back(
      quantized_example(with_output_quantization(a, 0.05, -20),
                        {quantized_data({3, 11}, DType::kInt8, in_scale, op.positive_input ? -128 : 0)}));
  a.set("scalar", op.example_scalars[1]);
  d.examples.push_back(quantized_example(with_output_quantization(a, 0.03, 150),
                                         {quantized_data({13}, DType::kUInt8, in_scale, op.positive_input ? 0 : 128)}));
  d.reference_dtypes = d.scalar_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  OpRegistrar{std::move(d)};
}

float truth(bool c) { return c ? 1.0f : 0.0f; }

// x^s for the exponents models use as a cheaper expression: a square is a
// multiplication, not a pow call (both exact or correctly rounded).
std::string power_special(double s) {
  if (s == 1.0) return "{x}";
  if (s == 2.0) return "{x} * {x}";
  if (s == -1.0) return "1.0f / {x}";
  return "";
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
      {"_power_scalar", {"_PowerScalar"}, "std::pow({x}, {s})", [](float x, float s) { return std::pow(x, s); },
       nullptr, power_special, true, {2.5, -0.75, 2.0, -1.0, 1.0, 3.0}},
      {"_rpower_scalar", {"_RPowerScalar"}, "std::pow({s}, {x})", [](float x, float s) { return std::pow(s, x); },
       nullptr, nullptr, false, {2.5, 0.5}},
      {"_hypot_scalar", {"_HypotScalar"}, "std::hypot({x}, {s})", [](float x, float s) { return std::hypot(x, s); }},
      {"_equal_scalar", {"_EqualScalar"}, "{x} == {s} ? 1.0f : 0.0f", [](float x, float s) { return truth(x == s); },
       nullptr, nullptr, false, {2.5, -0.75, 0.0}},
      {"_not_equal_scalar", {"_NotEqualScalar"}, "{x} != {s} ? 1.0f : 0.0f",
       [](float x, float s) { return truth(x != s); }},
      {"_greater_scalar", {"_GreaterScalar"}, "{x} > {s} ? 1.0f : 0.0f", [](float x, float s) { return truth(x > s); },
       nullptr, nullptr, false, {0.5, -0.75, 0.0}},
      {"_greater_equal_scalar", {"_GreaterEqualScalar"}, "{x} >= {s} ? 1.0f : 0.0f",
       [](float x, float s) { return truth(x >= s); }},
      {"_lesser_scalar", {"_LesserScalar"}, "{x} < {s} ? 1.0f : 0.0f", [](float x, float s) { return truth(x < s); }},
      {"_lesser_equal_scalar", {"_LesserEqualScalar"}, "{x} <= {s} ? 1.0f : 0.0f",
       [](float x, float s) { return truth(x <= s); }},
      {"_logical_and_scalar", {"_LogicalAndScalar"}, "{x} != 0.0f && {s} != 0.0f ? 1.0f : 0.0f",
       [](float x, float s) { return truth(x != 0.0f && s != 0.0f); }, nullptr, nullptr, false, {2.5, 0.0}},
      {"_logical_or_scalar", {"_LogicalOrScalar"}, "{x} != 0.0f || {s} != 0.0f ? 1.0f : 0.0f",
       [](float x, float s) { return truth(x != 0.0f || s != 0.0f); }, nullptr, nullptr, false, {2.5, 0.0}},
      {"_logical_xor_scalar", {"_LogicalXorScalar"}, "({x} != 0.0f) != ({s} != 0.0f) ? 1.0f : 0.0f",
       [](float x, float s) { return truth((x != 0.0f) != (s != 0.0f)); }, nullptr, nullptr, false, {2.5, 0.0}},
  };
  for (const auto& op : ops) register_scalar(op);
  return true;
}();

}  // namespace
}  // namespace hybgen
