// BatchNorm at inference: y = (x - moving_mean) / sqrt(moving_var + eps) *
// gamma + beta along `axis`. fix_gamma=true (MXNet's default) treats gamma as
// 1 whatever is stored. Defaults follow MXNet's C++ op (eps 1e-3), which is
// what files that omit attributes mean.
#include <cmath>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

struct ChannelView {
  int64_t outer, channels, inner;
};

ChannelView view(const Attrs& a, const Shape& s) {
  const int axis = normalize_axis(a.get_int("axis"), s.size());
  return {dims_product(s, 0, axis), s[axis], dims_product(s, axis + 1, s.size())};
}

void batch_norm_reference(const KernelIO& io) {
  const ChannelView v = view(io.attrs, io.in_types[0].shape);
  const bool fix_gamma = io.attrs.get_bool("fix_gamma");
  const double eps = io.attrs.get_float("eps");
  for (int64_t c = 0; c < v.channels; ++c) {
    const double scale =
        (fix_gamma ? 1.0 : io.input<float>(1)[c]) / std::sqrt(static_cast<double>(io.input<float>(4)[c]) + eps);
    const double shift = io.input<float>(2)[c] - io.input<float>(3)[c] * scale;
    for (int64_t o = 0; o < v.outer; ++o) {
      const int64_t base = (o * v.channels + c) * v.inner;
      for (int64_t i = 0; i < v.inner; ++i)
        io.output<float>(0)[base + i] = static_cast<float>(io.input<float>(0)[base + i] * scale + shift);
    }
  }
}

KernelCall batch_norm_emit_cpp(const EmitContext& ctx) {
  const ChannelView v = view(ctx.node.attrs, ctx.in_types[0].shape);
  return {{"batch_norm"}, "hg_batch_norm(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.in[2] + ", " + ctx.in[3] +
                              ", " + ctx.in[4] + ", " + ctx.out[0] + ", " + std::to_string(v.outer) + ", " +
                              std::to_string(v.channels) + ", " + std::to_string(v.inner) + ", " +
                              cpp_float(ctx.node.attrs.get_float("eps")) + ", " +
                              (ctx.node.attrs.get_bool("fix_gamma") ? "true" : "false") + ");"};
}

Attrs bn(bool fix_gamma, int64_t axis, double eps) {
  Attrs a;
  a.set("fix_gamma", fix_gamma);
  a.set("axis", axis);
  a.set("eps", eps);
  return a;
}

const OpRegistrar batch_norm_op([] {
  OpDef d;
  d.name = "BatchNorm";
  // Channels along axis 0 would give each item its own statistics.
  d.mixes_first_axis = mixes_along_axis_attr("axis");
  d.summary = "batch normalisation with the moving statistics (inference)";
  d.input_names = {"data", "gamma", "beta", "moving_mean", "moving_var"};
  d.min_inputs = d.max_inputs = 5;
  d.attrs = {{"eps", AttrKind::kFloat, 1e-3, "added to the variance", {}},
             {"momentum", AttrKind::kFloat, 0.9, "training only", {}},
             {"fix_gamma", AttrKind::kBool, true, "treat gamma as 1", {}},
             {"use_global_stats", AttrKind::kBool, false, "inference always uses the moving statistics", {}},
             {"axis", AttrKind::kInt, int64_t{1}, "the channel axis", {}},
             {"output_mean_var", AttrKind::kBool, false, "training only", {}},
             {"cudnn_off", AttrKind::kBool, false, "ignored", {}}};
  d.fusion = FusionClass::kBroadcast;
  d.inplace = true;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    // Callers may infer before validate has counted the inputs (importers do).
    if (in.size() != 5)
      throw Error("has " + std::to_string(in.size()) +
                  " inputs, expected 5 (data, gamma, beta, moving_mean, moving_var)");
    const ChannelView v = view(a, in[0].shape);
    for (std::size_t i = 1; i < 5; ++i)
      if (in[i].shape != Shape{v.channels})
        throw Error("input " + std::to_string(i) + " has shape " + shape_str(in[i].shape) + ", expected " +
                    shape_str({v.channels}));
    return std::vector<TensorType>{in[0]};
  };
  d.reference = batch_norm_reference;
  register_kernel(Backend::kCpp, d.name, OpKernel{batch_norm_emit_cpp});
  d.flops = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return 2.0 * static_cast<double>(in[0].num_elements());
  };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const Shape c{view(a, data).channels};
    return std::vector<Shape>{c, c, c, c};
  };
  d.input_ranges = {positive_input(4)};
  const Shape c3{3};
  d.examples = {{bn(false, 1, 1e-5), {{2, 3, 4, 5}, c3, c3, c3, c3}},
                {bn(true, 1, 1e-3), {{1, 3, 2, 2}, c3, c3, c3, c3}},
                {bn(false, -1, 1e-3), {{4, 3}, c3, c3, c3, c3}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
