// softmax and log_softmax along one axis (default the last), with an
// optional temperature: exp((x - max) / T) / sum.
#include <cmath>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

struct AxisView {
  int64_t outer, n, inner;
};

AxisView axis_view(const Attrs& a, const Shape& s) {
  const int axis = normalize_axis(a.get_int("axis"), s.size());
  return {dims_product(s, 0, axis), s[axis], dims_product(s, axis + 1, s.size())};
}

std::vector<TensorType> infer(const Attrs& a, const std::vector<TensorType>& in) {
  if (a.get_bool("use_length")) throw Error("use_length=true is not supported");
  if (a.get_float("temperature") <= 0) throw Error("temperature must be positive");
  axis_view(a, in[0].shape);  // validates the axis
  return {in[0]};
}

void reference(const KernelIO& io, bool log_output) {
  const AxisView v = axis_view(io.attrs, io.in_types[0].shape);
  const double inv_t = 1.0 / io.attrs.get_float("temperature");
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t in = 0; in < v.inner; ++in) {
      const float* x = io.in[0] + o * v.n * v.inner + in;
      float* y = io.out[0] + o * v.n * v.inner + in;
      double max_value = x[0];
      for (int64_t i = 1; i < v.n; ++i) max_value = std::max(max_value, static_cast<double>(x[i * v.inner]));
      double sum = 0;
      for (int64_t i = 0; i < v.n; ++i) sum += std::exp((x[i * v.inner] - max_value) * inv_t);
      for (int64_t i = 0; i < v.n; ++i) {
        const double z = (x[i * v.inner] - max_value) * inv_t;
        y[i * v.inner] = static_cast<float>(log_output ? z - std::log(sum) : std::exp(z) / sum);
      }
    }
}

CppCall emit(const CppEmitContext& ctx, bool log_output) {
  const AxisView v = axis_view(ctx.node.attrs, ctx.in_types[0].shape);
  return {{"softmax"}, "hg_softmax(" + ctx.in[0] + ", " + ctx.out[0] + ", " + std::to_string(v.outer) + ", " +
                           std::to_string(v.n) + ", " + std::to_string(v.inner) + ", " +
                           cpp_float(1.0 / ctx.node.attrs.get_float("temperature")) + ", " +
                           (log_output ? "true" : "false") + ");"};
}

Attrs axis_attrs(int64_t axis, double temperature = 1.0) {
  Attrs a;
  a.set("axis", axis);
  a.set("temperature", temperature);
  return a;
}

OpDef softmax_op(const std::string& name, bool log_output) {
  OpDef d;
  d.name = name;
  d.summary = log_output ? "log of softmax along an axis" : "softmax along an axis";
  d.input_names = {"data"};
  d.attrs = {{"axis", AttrKind::kInt, int64_t{-1}, "the axis to normalise", {}},
             {"temperature", AttrKind::kFloat, 1.0, "divides the input", {}},
             {"use_length", AttrKind::kBool, false, "masking by length (unsupported)", {}}};
  d.fusion = FusionClass::kReduction;
  d.infer = infer;
  d.reference = [log_output](const KernelIO& io) { reference(io, log_output); };
  d.emit_cpp = [log_output](const CppEmitContext& ctx) { return emit(ctx, log_output); };
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return 5.0 * static_cast<double>(out[0].num_elements());
  };
  d.examples = {{axis_attrs(-1), {{2, 10}}}, {axis_attrs(1, 2.0), {{2, 3, 4}}}, {axis_attrs(0), {{5, 1}}}};
  return d;
}

const OpRegistrar softmax(softmax_op("softmax", false));
const OpRegistrar log_softmax(softmax_op("log_softmax", true));

}  // namespace
}  // namespace hybgen
