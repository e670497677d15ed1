// Elementwise math functions: exp, log, sqrt, ..., the trigonometric and
// rounding functions, and the ops that are the identity at inference
// (BlockGrad, make_loss). Each is one C++ expression for the kernel; exp,
// expm1 and erf print the vectorisable approximations of templates/kernels/
// math.inc and the rounding functions those of rounding.inc, while their
// references stay the std:: functions (MXNet's mshadow_op ones). On
// quantized data, with an output scale of its own, each is a lookup table
// of its reference (ops/quantized.h).
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

// Where an op's random test data must lie for its result to be finite.
struct Domain {
  float low, high;
};
const Domain kAll{-2.0f, 2.0f}, kPositive{0.1f, 2.0f}, kOpenUnit{-0.95f, 0.95f};

struct UnaryOp {
  const char* name;
  std::vector<std::string> aliases;
  const char* expression;  // C++ of the element {x}, as the kernel prints it
  float (*apply)(float);
  Domain domain;
  std::vector<std::string> kernels;  // templates/kernels/ the expression calls (OpDef::scalar_kernels)
  // The op on integer (and bool) values, computed in int64 and stored back
  // into their type (wrapping); nullptr: float32 only.
  int64_t (*apply_int)(int64_t) = nullptr;
};

// MXNet's rint: the nearer of floor and ceil, floor on a tie (not ties to even).
float mxnet_rint(float x) {
  const float f = std::floor(x), c = std::ceil(x);
  return x - f <= c - x ? f : c;
}

void register_unary(const UnaryOp& op) {
  OpDef d;
  d.name = op.name;
  d.aliases = op.aliases;
  d.summary = std::string("elementwise ") + op.name;
  d.input_names = {"data"};
  d.attrs = with_output_quantization({});
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  auto apply = op.apply;
  auto apply_int = op.apply_int;
  d.infer = [apply_int](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{table_or_same_output(a, in[0], apply_int != nullptr)};
  };
  d.reference = [apply, apply_int](const KernelIO& io) {
    if (has_output_quantization(io.attrs)) return lookup_table_reference(io, apply);
    const int64_t n = io.out_types[0].num_elements();
    if (io.in_types[0].dtype == DType::kFloat32) {
      for (int64_t i = 0; i < n; ++i) io.output<float>(0)[i] = apply(io.input<float>(0)[i]);
      return;
    }
    with_value_type(io.in_types[0].dtype, [&](auto value) {
      using T = decltype(value);
      for (int64_t i = 0; i < n; ++i)
        io.output<T>(0)[i] = static_cast<T>(apply_int(static_cast<int64_t>(io.input<T>(0)[i])));
    });
  };
  d.reference_dtypes =
      apply_int ? float32_and_integer_dtypes() : std::vector<DType>{DType::kFloat32, DType::kInt8, DType::kUInt8};
  d.scalar_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  const std::string expression = op.expression;
  d.emit_scalar = [expression, apply](const ScalarSite& s) {
    if (has_output_quantization(s.attrs)) return lookup_table_scalar(s, apply);
    return fill_operands(expression, {{"{x}", s.in[0]}});
  };
  d.scalar_kernels = op.kernels;
  d.input_ranges = {{0, op.domain.low, op.domain.high}};
  d.examples = {{Attrs{}, {{3, 7}}}, {Attrs{}, {{1}}}, {Attrs{}, {{2, 45}}}};
  // Quantized (a table), int8 and uint8: about 0 where the domain has negatives, else from 0.
  const bool signed_domain = op.domain.low < 0.0f;
  const float in_scale = op.domain.high / (signed_domain ? 127.0f : 255.0f);
  d.examples.push_back(quantized_example(with_output_quantization(Attrs{}, 0.04, -10),
                                         {quantized_data({2, 23}, DType::kInt8, in_scale, signed_domain ? 0 : -128)}));
  d.examples.push_back(quantized_example(with_output_quantization(Attrs{}, 0.03, 100),
                                         {quantized_data({17}, DType::kUInt8, in_scale, signed_domain ? 128 : 0)}));
  OpRegistrar{std::move(d)};
}

// Ops that forward their input at inference (gradient plumbing in training):
// removed before code generation (OpDef::is_identity).
void register_identity(const char* name, std::vector<std::string> aliases, std::vector<AttrSpec> attrs,
                       const char* summary) {
  OpDef d;
  d.name = name;
  d.aliases = std::move(aliases);
  d.summary = summary;
  d.input_names = {"data"};
  d.attrs = std::move(attrs);
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  d.reference = [](const KernelIO& io) {
    std::copy(io.input<float>(0), io.input<float>(0) + io.in_types[0].num_elements(), io.output<float>(0));
  };
  d.emit_scalar = [](const ScalarSite& s) { return s.in[0]; };
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  d.is_identity = [](const Attrs&) { return true; };
  d.examples = {{Attrs{}, {{2, 5}}}, {Attrs{}, {{1}}}};
  OpRegistrar{std::move(d)};
}

const bool unary_math_registered = [] {
  const std::vector<std::string> math = {"math"}, rounding = {"math", "rounding"};
  const UnaryOp ops[] = {
      {"exp", {}, "hg_exp({x})", [](float x) { return std::exp(x); }, kAll, math},
      {"expm1", {}, "hg_expm1({x})", [](float x) { return std::expm1(x); }, kAll, math},
      {"log", {}, "std::log({x})", [](float x) { return std::log(x); }, kPositive, {}},
      {"log2", {}, "std::log2({x})", [](float x) { return std::log2(x); }, kPositive, {}},
      {"log10", {}, "std::log10({x})", [](float x) { return std::log10(x); }, kPositive, {}},
      {"log1p", {}, "std::log1p({x})", [](float x) { return std::log1p(x); }, kPositive, {}},
      {"sqrt", {}, "std::sqrt({x})", [](float x) { return std::sqrt(x); }, kPositive, {}},
      {"rsqrt", {}, "1.0f / std::sqrt({x})", [](float x) { return 1.0f / std::sqrt(x); }, kPositive, {}},
      {"cbrt", {}, "std::cbrt({x})", [](float x) { return std::cbrt(x); }, kAll, {}},
      {"rcbrt", {}, "1.0f / std::cbrt({x})", [](float x) { return 1.0f / std::cbrt(x); }, kPositive, {}},
      {"reciprocal", {}, "1.0f / {x}", [](float x) { return 1.0f / x; }, kAll, {}},
      {"erf", {}, "hg_erf({x})", [](float x) { return std::erf(x); }, kAll, math},
      {"abs", {}, "std::fabs({x})", [](float x) { return std::fabs(x); }, kAll, {}},
      {"negative", {}, "-{x}", [](float x) { return -x; }, kAll, {},
       [](int64_t x) { return static_cast<int64_t>(0 - static_cast<uint64_t>(x)); }},
      {"square", {}, "{x} * {x}", [](float x) { return x * x; }, kAll, {}},
      // mshadow_op::sign: 0 for zero and NaN.
      {"sign", {}, "{x} > 0.0f ? 1.0f : ({x} < 0.0f ? -1.0f : 0.0f)",
       [](float x) { return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f); }, kAll, {}},
      {"floor", {}, "hg_floor({x})", [](float x) { return std::floor(x); }, kAll, rounding},
      {"ceil", {}, "hg_ceil({x})", [](float x) { return std::ceil(x); }, kAll, rounding},
      {"trunc", {}, "hg_trunc({x})", [](float x) { return std::trunc(x); }, kAll, rounding},
      // fix: rounds toward zero, as trunc.
      {"fix", {}, "hg_trunc({x})", [](float x) { return std::trunc(x); }, kAll, rounding},
      {"round", {}, "hg_round({x})", [](float x) { return std::round(x); }, kAll, rounding},
      {"rint", {}, "hg_mxnet_rint({x})", mxnet_rint, kAll, rounding},
      {"sin", {}, "std::sin({x})", [](float x) { return std::sin(x); }, kAll, {}},
      {"cos", {}, "std::cos({x})", [](float x) { return std::cos(x); }, kAll, {}},
      {"tan", {}, "std::tan({x})", [](float x) { return std::tan(x); }, kAll, {}},
      {"arctan", {}, "std::atan({x})", [](float x) { return std::atan(x); }, kAll, {}},
      {"sinh", {}, "std::sinh({x})", [](float x) { return std::sinh(x); }, kAll, {}},
      {"cosh", {}, "std::cosh({x})", [](float x) { return std::cosh(x); }, kAll, {}},
      {"arcsinh", {}, "std::asinh({x})", [](float x) { return std::asinh(x); }, kAll, {}},
      {"arcsin", {}, "std::asin({x})", [](float x) { return std::asin(x); }, kOpenUnit, {}},
      {"arccos", {}, "std::acos({x})", [](float x) { return std::acos(x); }, kOpenUnit, {}},
      {"arctanh", {}, "std::atanh({x})", [](float x) { return std::atanh(x); }, kOpenUnit, {}},
      {"arccosh", {}, "std::acosh({x})", [](float x) { return std::acosh(x); }, Domain{1.05f, 4.0f}, {}},
      {"gamma", {}, "std::tgamma({x})", [](float x) { return std::tgamma(x); }, Domain{0.1f, 4.0f}, {}},
      {"gammaln", {}, "std::lgamma({x})", [](float x) { return std::lgamma(x); }, Domain{0.1f, 4.0f}, {}},
      // mshadow_op::degrees / radians: x times 180 / pi (pi / 180) rounded to float, as MXNet computes it.
      {"degrees", {}, "{x} * 57.2957764f", [](float x) { return x * 57.2957764f; }, kAll, {}},
      {"radians", {}, "{x} * 0.0174532924f", [](float x) { return x * 0.0174532924f; }, kAll, {}},
      // mshadow_op::nt: 1 where x is 0, else 0.
      {"logical_not", {}, "{x} != 0.0f ? 0.0f : 1.0f", [](float x) { return x != 0.0f ? 0.0f : 1.0f; },
       kAll, {}, [](int64_t x) -> int64_t { return x == 0; }},
  };
  for (const auto& op : ops) register_unary(op);

  register_identity("BlockGrad", {"stop_gradient"}, {}, "identity at inference (stops gradients in training)");
  // make_loss, and the legacy MakeLoss whose attributes only scale gradients.
  register_identity("make_loss", {"MakeLoss"},
                    {{"grad_scale", AttrKind::kFloat, 1.0, "gradient scale (MakeLoss; training only)", {}},
                     {"valid_thresh", AttrKind::kFloat, 0.0, "threshold of valid normalisation (MakeLoss; training only)",
                      {}},
                     {"normalization", AttrKind::kString, std::string("null"),
                      "gradient normalisation (MakeLoss; training only)", {"null", "batch", "valid"}}},
                    "identity at inference (marks a loss in training)");
  return true;
}();

}  // namespace
}  // namespace hybgen
