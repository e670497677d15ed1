// Elementwise math functions: exp, log, sqrt, rsqrt, erf, abs, negative,
// square. Each is one C++ expression for the kernel; exp and erf print the
// vectorisable approximations of templates/kernels/math.inc, while their
// references stay the std:: functions.
#include <cmath>

#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

struct UnaryOp {
  const char* name;
  const char* expression;  // C++ of the element {x}, as the kernel prints it
  float (*apply)(float);
  bool positive_domain;
  bool uses_math;  // the expression calls templates/kernels/math.inc
};

void register_unary(const UnaryOp& op) {
  OpDef d;
  d.name = op.name;
  d.summary = std::string("elementwise ") + op.name;
  d.input_names = {"data"};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  auto apply = op.apply;
  d.reference = [apply](const KernelIO& io) {
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) io.out[0][i] = apply(io.in[0][i]);
  };
  const std::string expression = op.expression;
  d.emit_scalar = [expression](const Attrs&, const std::vector<std::string>& in) {
    return fill_operands(expression, {{"{x}", in[0]}});
  };
  if (op.uses_math) d.scalar_kernels = {"math"};
  if (op.positive_domain) d.positive_inputs = {0};
  d.examples = {{Attrs{}, {{3, 7}}}, {Attrs{}, {{1}}}, {Attrs{}, {{2, 45}}}};
  OpRegistrar{std::move(d)};
}

const bool registered = [] {
  const UnaryOp ops[] = {
      {"exp", "hg_exp({x})", [](float x) { return std::exp(x); }, false, true},
      {"log", "std::log({x})", [](float x) { return std::log(x); }, true, false},
      {"sqrt", "std::sqrt({x})", [](float x) { return std::sqrt(x); }, true, false},
      {"rsqrt", "1.0f / std::sqrt({x})", [](float x) { return 1.0f / std::sqrt(x); }, true, false},
      {"erf", "hg_erf({x})", [](float x) { return std::erf(x); }, false, true},
      {"abs", "std::fabs({x})", [](float x) { return std::fabs(x); }, false, false},
      {"negative", "-{x}", [](float x) { return -x; }, false, false},
      {"square", "{x} * {x}", [](float x) { return x * x; }, false, false},
  };
  for (const auto& op : ops) register_unary(op);
  return true;
}();

}  // namespace
}  // namespace hybgen
