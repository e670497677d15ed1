// softmax and log_softmax along one axis (default the last), with an
// optional temperature: exp((x - max) / T) / sum. softmax on quantized data
// computes in integers into an output scale of its own (out_scale): an exp
// table of 256 entries on x - max, as TFLite's int8 softmax
// (templates/kernels/softmax_q8.inc, docs/quantization.md).
#include <cmath>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

std::vector<TensorType> softmax_infer(const Attrs& a, const std::vector<TensorType>& in, bool log_output) {
  if (a.get_bool("use_length")) throw Error("use_length=true is not supported");
  if (a.get_float("temperature") <= 0) throw Error("temperature must be positive");
  axis_view(in[0].shape, a.get_int("axis"));  // validates the axis
  if (log_output) {
    if (!in[0].quantization.empty())
      throw Error("log_softmax is computed in float; quantized data needs a dequantize first");
    return {in[0]};
  }
  check_float_or_quantized(in[0]);
  if (!in[0].quantization.empty() && in[0].dtype != DType::kInt8 && in[0].dtype != DType::kUInt8)
    throw Error("quantized softmax takes int8 or uint8, not " + in[0].str());
  return {quantized_output(a, in[0], in[0].shape)};
}

// The integer softmax: the arithmetic of templates/kernels/softmax_q8.inc
// with the same exp table (softmax_exp_table) and Q30 rounding.
void softmax_reference_quantized(const KernelIO& io) {
  const TensorType &in = io.in_types[0], &out = io.out_types[0];
  const AxisView v = axis_view(in.shape, io.attrs.get_int("axis"));
  const std::vector<std::int32_t> table =
      softmax_exp_table(in.quantization.scale[0], 1.0 / io.attrs.get_float("temperature"));
  const Requantization r = softmax_output_requantization(out.quantization);
  const std::pair<std::int32_t, std::int32_t> range = int32_range(out.dtype);  // captured below: no binding
  const std::int32_t lo = range.first, hi = range.second;
  const auto zero_point = static_cast<std::int32_t>(out.quantization.zero_point[0]);
  with_value_type(in.dtype, [&](auto value) {
    using T = decltype(value);
    for (int64_t o = 0; o < v.outer; ++o)
      for (int64_t c = 0; c < v.inner; ++c) {
        const T* x = io.input<T>(0) + o * v.n * v.inner + c;
        T* y = io.output<T>(0) + o * v.n * v.inner + c;
        std::int32_t m = x[0];
        for (int64_t i = 1; i < v.n; ++i) m = std::max<std::int32_t>(m, x[i * v.inner]);
        std::int64_t sum = 0;
        for (int64_t i = 0; i < v.n; ++i) sum += table[static_cast<std::size_t>(m - x[i * v.inner])];
        for (int64_t i = 0; i < v.n; ++i)
          y[i * v.inner] = static_cast<T>(requantize_clamp(
              softmax_q30(table[static_cast<std::size_t>(m - x[i * v.inner])], sum), r, zero_point, lo, hi));
      }
  });
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

KernelCall emit_quantized(const EmitContext& ctx) {
  const TensorType &in = ctx.in_types[0], &out = ctx.out_types[0];
  const AxisView v = axis_view(in.shape, ctx.node.attrs.get_int("axis"));
  const std::vector<std::int32_t> table =
      softmax_exp_table(in.quantization.scale[0], 1.0 / ctx.node.attrs.get_float("temperature"));
  const Requantization r = softmax_output_requantization(out.quantization);
  const std::pair<std::int32_t, std::int32_t> range = int32_range(out.dtype);  // captured: no binding
  const std::int32_t lo = range.first, hi = range.second;
  return {{"softmax_q8"},
          "{\n  // round(2^24 exp(-x_scale (max - x) / temperature)) at max - x = 0..255\n"
          "  static const std::int32_t exp_table[] = " +
              cpp_int_list(std::vector<int64_t>(table.begin(), table.end())) + ";\n  hg_softmax_q8(" + ctx.in[0] +
              ", " + ctx.out[0] + ", " + std::to_string(v.outer) + ", " + std::to_string(v.n) + ", " +
              std::to_string(v.inner) + ", exp_table, " + int_str(r.multiplier) + ", " + int_str(r.shift) + ", " +
              int_str(out.quantization.zero_point[0]) + ", " + int_str(lo) + ", " + int_str(hi) + ");\n}"};
}

KernelCall emit(const EmitContext& ctx, bool log_output) {
  if (!ctx.in_types[0].quantization.empty()) return emit_quantized(ctx);
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
  if (!log_output) d.attrs = with_output_quantization(d.attrs);
  d.fusion = FusionClass::kReduction;
  d.mixes_first_axis = mixes_along_axis_attr("axis");
  d.infer = [log_output](const Attrs& a, const std::vector<TensorType>& in) {
    return softmax_infer(a, in, log_output);
  };
  d.reference = [log_output](const KernelIO& io) {
    if (!io.in_types[0].quantization.empty()) return softmax_reference_quantized(io);
    softmax_reference(io, log_output);
  };
  OpKernel cpp{[log_output](const EmitContext& ctx) { return emit(ctx, log_output); }};
  if (!log_output) d.reference_dtypes = cpp.dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  register_kernel(Backend::kCpp, d.name, std::move(cpp));
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return 5.0 * static_cast<double>(out[0].num_elements());
  };
  // Rows shorter and longer than the kernel's 16 lanes, with a tail and
  // without; an inner axis wider than 16 columns.
  d.examples = {{axis_attrs(-1), {{2, 10}}},      {axis_attrs(1, 2.0), {{2, 3, 4}}}, {axis_attrs(0), {{5, 1}}},
                {axis_attrs(-1, 0.5), {{3, 37}}}, {axis_attrs(1), {{2, 5, 19}}},     {axis_attrs(-1), {{2, 64}}}};
  if (!log_output) {
    // Quantized: TFLite's output quantization (1/256, -128), a temperature, an inner axis, uint8, a row of one.
    d.examples.push_back(quantized_example(with_output_quantization(axis_attrs(-1), 1.0 / 256, -128),
                                           {quantized_data({3, 37}, DType::kInt8, 0.05f, 4)}));
    d.examples.push_back(quantized_example(with_output_quantization(axis_attrs(1, 0.5), 0.002, -128),
                                           {quantized_data({2, 5, 19}, DType::kInt8, 0.02f, -30)}));
    d.examples.push_back(quantized_example(with_output_quantization(axis_attrs(-1), 0.003, 0),
                                           {quantized_data({4, 10}, DType::kUInt8, 0.1f, 128)}));
    d.examples.push_back(quantized_example(with_output_quantization(axis_attrs(0), 1.0 / 256, -128),
                                           {quantized_data({1, 6}, DType::kInt8, 0.05f, 0)}));
  }
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
  // Both normalise within one instance (axis 0) unless the data has no other axis.
  d.mixes_first_axis = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<bool>&) {
    return in[0].shape.size() < 2;
  };
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
