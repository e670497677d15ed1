// Binary arithmetic with numpy broadcasting: broadcast_add/sub/mul/div/
// maximum/minimum. MXNet's same-shape spellings (elemwise_add, _plus, ...)
// are aliases: same-shape inputs are the broadcast case with nothing to
// broadcast.
#include <algorithm>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

constexpr int kMaxRank = 8;  // the generated broadcast kernel's index array

struct BinaryOp {
  const char* name;
  std::vector<std::string> aliases;
  const char* functor;  // in templates/kernels/elementwise_ops.inc
  float (*apply)(float, float);
};

std::vector<TensorType> infer(const Attrs&, const std::vector<TensorType>& in) {
  Shape out = broadcast_shapes(in[0].shape, in[1].shape);
  if (out.size() > kMaxRank) throw Error("rank " + std::to_string(out.size()) + " exceeds the supported 8");
  return {TensorType{out, in[0].dtype}};
}

void reference(const KernelIO& io, float (*apply)(float, float)) {
  const Shape& out = io.out_types[0].shape;
  const auto sa = broadcast_strides(io.in_types[0].shape, out);
  const auto sb = broadcast_strides(io.in_types[1].shape, out);
  for_each_strided(out, sa, sb,
                   [&](int64_t i, int64_t a, int64_t b) { io.out[0][i] = apply(io.in[0][a], io.in[1][b]); });
}

CppCall emit_cpp(const CppEmitContext& ctx, const std::string& functor) {
  const Shape& out = ctx.out_types[0].shape;
  const std::string args = ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0];
  if (ctx.in_types[0].shape == out && ctx.in_types[1].shape == out)
    return {{"elementwise_ops", "binary"},
            "hg_binary<" + functor + ">(" + args + ", " + std::to_string(num_elements(out)) + ");"};
  const Shape dims = out.empty() ? Shape{1} : out;
  const Shape a_shape = out.empty() ? Shape{1} : ctx.in_types[0].shape;
  const Shape b_shape = out.empty() ? Shape{1} : ctx.in_types[1].shape;
  std::string code = "{\n";
  code += "  static const long dims[] = " + cpp_int_list(dims) + ";\n";
  code += "  static const long a_strides[] = " + cpp_int_list(broadcast_strides(a_shape, dims)) + ";\n";
  code += "  static const long b_strides[] = " + cpp_int_list(broadcast_strides(b_shape, dims)) + ";\n";
  code += "  hg_binary_bcast<" + functor + ">(" + args + ", " + std::to_string(dims.size()) +
          ", dims, a_strides, b_strides);\n}";
  return {{"elementwise_ops", "binary"}, code};
}

std::vector<OpExample> examples() {
  return {{Attrs{}, {{2, 3}, {2, 3}}},       {Attrs{}, {{2, 3, 4}, {4}}},   {Attrs{}, {{3, 1, 5}, {1, 4, 1}}},
          {Attrs{}, {{1}, {6, 2}}},          {Attrs{}, {{5, 1}, {5, 7}}}};
}

void register_binary(const BinaryOp& op) {
  OpDef d;
  d.name = op.name;
  d.aliases = op.aliases;
  d.summary = std::string("elementwise ") + op.functor + " with numpy broadcasting";
  d.input_names = {"lhs", "rhs"};
  d.min_inputs = d.max_inputs = 2;
  d.fusion = FusionClass::kBroadcast;
  d.inplace = true;
  d.infer = infer;
  auto apply = op.apply;
  d.reference = [apply](const KernelIO& io) { reference(io, apply); };
  const std::string functor = op.functor;
  d.emit_cpp = [functor](const CppEmitContext& ctx) { return emit_cpp(ctx, functor); };
  d.examples = examples();
  OpRegistrar{std::move(d)};
}

const bool registered = [] {
  const BinaryOp ops[] = {
      {"broadcast_add", {"elemwise_add", "broadcast_plus", "_plus", "_add", "_Plus"}, "HgAdd",
       [](float a, float b) { return a + b; }},
      {"broadcast_sub", {"elemwise_sub", "broadcast_minus", "_minus", "_sub", "_Minus"}, "HgSub",
       [](float a, float b) { return a - b; }},
      {"broadcast_mul", {"elemwise_mul", "_mul", "_Mul"}, "HgMul", [](float a, float b) { return a * b; }},
      {"broadcast_div", {"elemwise_div", "_div", "_Div"}, "HgDiv", [](float a, float b) { return a / b; }},
      {"broadcast_maximum", {"_maximum", "_Maximum"}, "HgMax", [](float a, float b) { return a > b ? a : b; }},
      {"broadcast_minimum", {"_minimum", "_Minimum"}, "HgMin", [](float a, float b) { return a < b ? a : b; }},
  };
  for (const auto& op : ops) register_binary(op);
  return true;
}();

}  // namespace
}  // namespace hybgen
