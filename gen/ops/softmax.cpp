// softmax and log_softmax along one axis (default the last), with an
// optional temperature: exp((x - max) / T) / sum.
#include <cmath>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

std::vector<TensorType> softmax_infer(const Attrs& a, const std::vector<TensorType>& in) {
  if (a.get_bool("use_length")) throw Error("use_length=true is not supported");
  if (a.get_float("temperature") <= 0) throw Error("temperature must be positive");
  axis_view(in[0].shape, a.get_int("axis"));  // validates the axis
  return {in[0]};
}

void softmax_reference(const KernelIO& io, bool log_output) {
  const AxisView v = axis_view(io.in_types[0].shape, io.attrs.get_int("axis"));
  const double inv_t = 1.0 / io.attrs.get_float("temperature");
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t in = 0; in < v.inner; ++in) {
      const float* x = io.input<float>(0) + o * v.n * v.inner + in;
      float* y = io.output<float>(0) + o * v.n * v.inner + in;
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

KernelCall emit(const EmitContext& ctx, bool log_output) {
  const AxisView v = axis_view(ctx.in_types[0].shape, ctx.node.attrs.get_int("axis"));
  return {{"math", "softmax"}, "hg_softmax(" + ctx.in[0] + ", " + ctx.out[0] + ", " + std::to_string(v.outer) + ", " +
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
  d.infer = softmax_infer;
  d.reference = [log_output](const KernelIO& io) { softmax_reference(io, log_output); };
  register_kernel(Backend::kCpp, d.name,
                  OpKernel{[log_output](const EmitContext& ctx) { return emit(ctx, log_output); }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return 5.0 * static_cast<double>(out[0].num_elements());
  };
  // Rows shorter and longer than the kernel's 16 lanes, with a tail and
  // without; an inner axis wider than 16 columns.
  d.examples = {{axis_attrs(-1), {{2, 10}}},      {axis_attrs(1, 2.0), {{2, 3, 4}}}, {axis_attrs(0), {{5, 1}}},
                {axis_attrs(-1, 0.5), {{3, 37}}}, {axis_attrs(1), {{2, 5, 19}}},     {axis_attrs(-1), {{2, 64}}}};
  return d;
}

const OpRegistrar softmax(softmax_op("softmax", false));
const OpRegistrar log_softmax(softmax_op("log_softmax", true));

// SoftmaxOutput (MXNet's training head) at inference is a softmax: over all
// axes after the first by default, over axis 1 with multi_output, over the
// last axis with preserve_shape. The label input is training-only; the MXNet
// importer drops it.
AxisView softmax_output_view(const Attrs& a, const Shape& s) {
  if (s.empty()) throw Error("data must have at least one axis");
  if (a.get_bool("preserve_shape")) return {dims_product(s, 0, s.size() - 1), s.back(), 1};
  if (a.get_bool("multi_output")) {
    if (s.size() < 2) throw Error("multi_output needs at least 2 axes");
    return {s[0], s[1], dims_product(s, 2, s.size())};
  }
  return {s[0], dims_product(s, 1, s.size()), 1};
}

// SoftmaxActivation: per instance (over all axes after the first), or per
// position over the channel axis 1 (mode=channel).
AxisView softmax_activation_view(const Attrs& a, const Shape& s) {
  if (s.size() < 2) throw Error("data must have at least two axes");
  if (a.get_string("mode") == "channel") return {s[0], s[1], dims_product(s, 2, s.size())};
  return {s[0], dims_product(s, 1, s.size()), 1};
}

OpDef fixed_view_softmax(const std::string& name, AxisView (*view_of)(const Attrs&, const Shape&)) {
  OpDef d;
  d.name = name;
  d.fusion = FusionClass::kReduction;
  d.input_names = {"data"};
  d.infer = [view_of](const Attrs& a, const std::vector<TensorType>& in) {
    view_of(a, in[0].shape);
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [view_of](const KernelIO& io) {
    Attrs plain;
    const AxisView v = view_of(io.attrs, io.in_types[0].shape);
    // Reuse the softmax reference on the [outer, n, inner] view.
    plain.set("axis", int64_t{1});
    plain.set("temperature", 1.0);
    plain.set("use_length", false);
    KernelIO viewed{plain, io.in, {TensorType{{v.outer, v.n, v.inner}}}, io.out, {TensorType{{v.outer, v.n, v.inner}}}};
    softmax_reference(viewed, false);
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[view_of](const EmitContext& ctx) {
                    const AxisView v = view_of(ctx.node.attrs, ctx.in_types[0].shape);
                    return KernelCall{{"math", "softmax"},
                                      "hg_softmax(" + ctx.in[0] + ", " + ctx.out[0] + ", " + std::to_string(v.outer) +
                                          ", " + std::to_string(v.n) + ", " + std::to_string(v.inner) +
                                          ", 1.0f, false);"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return 5.0 * static_cast<double>(out[0].num_elements());
  };
  return d;
}

const OpRegistrar softmax_output([] {
  OpDef d = fixed_view_softmax("SoftmaxOutput", softmax_output_view);
  d.aliases = {"Softmax"};
  d.summary = "softmax head of MXNet training graphs (its inference form)";
  d.attrs = {{"multi_output", AttrKind::kBool, false, "softmax over axis 1", {}},
             {"preserve_shape", AttrKind::kBool, false, "softmax over the last axis", {}},
             {"grad_scale", AttrKind::kFloat, 1.0, "training only", {}},
             {"ignore_label", AttrKind::kFloat, -1.0, "training only", {}},
             {"use_ignore", AttrKind::kBool, false, "training only", {}},
             {"normalization", AttrKind::kString, std::string("null"), "training only", {"null", "batch", "valid"}},
             {"out_grad", AttrKind::kBool, false, "training only", {}},
             {"smooth_alpha", AttrKind::kFloat, 0.0, "training only", {}}};
  Attrs multi;
  multi.set("multi_output", true);
  Attrs keep;
  keep.set("preserve_shape", true);
  d.examples = {{Attrs{}, {{2, 3, 2}}}, {multi, {{2, 3, 2, 2}}}, {keep, {{2, 2, 5}}}};
  return d;
}());

const OpRegistrar softmax_activation([] {
  OpDef d = fixed_view_softmax("SoftmaxActivation", softmax_activation_view);
  d.summary = "softmax per instance or per channel";
  d.attrs = {{"mode", AttrKind::kString, std::string("instance"), "instance or channel", {"instance", "channel"}}};
  Attrs channel;
  channel.set("mode", std::string("channel"));
  d.examples = {{Attrs{}, {{2, 6}}}, {channel, {{1, 2, 3, 3}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
