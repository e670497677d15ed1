// InstanceNorm and GroupNorm: normalise rows of a tensor with the row's own
// mean and variance, then scale and shift with a value per row class.
//   InstanceNorm (data (N, C, ...), gamma and beta (C,)): a row is one
//   channel of one sample, its spatial values; class = the channel.
//   GroupNorm (data (N, C, ...), gamma and beta (num_groups,), MXNet 1.9's
//   shapes): a row is one group of C/num_groups channels of one sample, all
//   their spatial values; class = the group.
// Both: y = (x - mean) / sqrt(var + eps) * gamma[class] + beta[class], the
// variance biased (divided by the row's length), as MXNet computes them. The
// C++ kernel is templates/kernels/group_norm.inc, the CUDA one
// templates/cuda/kernels/group_norm.inc (gen/ops/cuda/norm_kernels.cpp).
#include <cmath>
#include <string>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

// rows x n values, row r scaled by gamma[r % classes].
struct RowView {
  int64_t rows, n, classes;
};

RowView instance_view(const Shape& s) {
  if (s.size() < 3) throw Error("data must have at least 3 dims (N, C, spatial...), got " + shape_str(s));
  return {s[0] * s[1], dims_product(s, 2, s.size()), s[1]};
}

RowView group_view(const Attrs& a, const Shape& s) {
  if (s.size() < 3) throw Error("data must have at least 3 dims (N, C, spatial...), got " + shape_str(s));
  const int64_t groups = a.get_int("num_groups");
  if (groups <= 0 || s[1] % groups)
    throw Error("num_groups " + std::to_string(groups) + " must be positive and divide the channels " +
                std::to_string(s[1]));
  return {s[0] * groups, s[1] / groups * dims_product(s, 2, s.size()), groups};
}

void check_eps(const Attrs& a) {
  const double eps = a.get_float("eps");
  if (!(eps >= 0) || !std::isfinite(eps)) throw Error("eps must be finite and non-negative, got " + cpp_float(eps));
}

std::vector<TensorType> infer_rows(const RowView& v, const std::vector<TensorType>& in) {
  for (std::size_t i = 1; i < 3; ++i)
    if (in[i].shape != Shape{v.classes})
      throw Error(std::string(i == 1 ? "gamma" : "beta") + " has shape " + shape_str(in[i].shape) + ", expected " +
                  shape_str({v.classes}));
  return {in[0]};
}

void reference_rows(const RowView& v, double eps, const KernelIO& io) {
  for (int64_t r = 0; r < v.rows; ++r) {
    const float* x = io.input<float>(0) + r * v.n;
    float* y = io.output<float>(0) + r * v.n;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < v.n; ++i) mean += x[i];
    mean /= static_cast<double>(v.n);
    for (int64_t i = 0; i < v.n; ++i) var += (x[i] - mean) * (x[i] - mean);
    const double inv_std = 1.0 / std::sqrt(var / static_cast<double>(v.n) + eps);
    const double gamma = io.input<float>(1)[r % v.classes], beta = io.input<float>(2)[r % v.classes];
    for (int64_t i = 0; i < v.n; ++i) y[i] = static_cast<float>((x[i] - mean) * inv_std * gamma + beta);
  }
}

KernelCall emit_rows(const EmitContext& ctx, const RowView& v) {
  return {{"group_norm"}, "hg_group_norm(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.in[2] + ", " + ctx.out[0] +
                              ", " + std::to_string(v.rows) + ", " + std::to_string(v.n) + ", " +
                              std::to_string(v.classes) + ", " + cpp_float(ctx.node.attrs.get_float("eps")) + ", " +
                              ctx.pool + ");"};
}

double flops(const std::vector<TensorType>& in) { return 7.0 * static_cast<double>(in[0].num_elements()); }

const OpRegistrar instance_reg([] {
  OpDef d;
  d.name = "InstanceNorm";
  d.summary = "instance normalisation: each channel of each sample over its spatial axes (Gluon nn.InstanceNorm)";
  d.input_names = {"data", "gamma", "beta"};
  d.min_inputs = d.max_inputs = 3;
  d.attrs = {{"eps", AttrKind::kFloat, 1e-3, "added to the variance", {}}};
  d.fusion = FusionClass::kReduction;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    check_eps(a);
    return infer_rows(instance_view(in[0].shape), in);
  };
  d.reference = [](const KernelIO& io) {
    reference_rows(instance_view(io.in_types[0].shape), io.attrs.get_float("eps"), io);
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    return emit_rows(ctx, instance_view(ctx.in_types[0].shape));
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>&) { return flops(in); };
  d.weight_shapes = [](const Attrs&, const Shape& data) {
    const Shape c{instance_view(data).classes};
    return std::vector<Shape>{c, c};
  };
  Attrs plain, eps;
  eps.set("eps", 1e-5);
  // 1-D, 2-D and 3-D spatial axes; rows shorter and longer than the kernel's
  // 16 partial sums; a single spatial value (the variance is 0).
  d.examples = {{plain, {{2, 3, 5, 7}, {3}, {3}}},
                {eps, {{1, 4, 37}, {4}, {4}}},
                {plain, {{2, 2, 3, 4, 5}, {2}, {2}}},
                {plain, {{1, 5, 1, 1}, {5}, {5}}},
                {eps, {{1, 2, 300}, {2}, {2}}}};
  return d;
}());

const OpRegistrar group_reg([] {
  OpDef d;
  d.name = "GroupNorm";
  d.summary = "group normalisation: groups of channels of each sample, gamma/beta per group (MXNet 1.9)";
  d.input_names = {"data", "gamma", "beta"};
  d.min_inputs = d.max_inputs = 3;
  d.attrs = {{"num_groups", AttrKind::kInt, int64_t{1}, "groups the channels split into", {}},
             {"eps", AttrKind::kFloat, 1e-5, "added to the variance", {}},
             {"output_mean_var", AttrKind::kBool, false, "also output mean and std (training only; refused)", {}}};
  d.fusion = FusionClass::kReduction;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (a.get_bool("output_mean_var"))
      throw Error("output_mean_var=true is not supported (the mean and std outputs serve training only)");
    check_eps(a);
    return infer_rows(group_view(a, in[0].shape), in);
  };
  d.reference = [](const KernelIO& io) {
    reference_rows(group_view(io.attrs, io.in_types[0].shape), io.attrs.get_float("eps"), io);
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    return emit_rows(ctx, group_view(ctx.node.attrs, ctx.in_types[0].shape));
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>&) { return flops(in); };
  d.weight_shapes = [](const Attrs& a, const Shape& data) {
    const Shape g{group_view(a, data).classes};
    return std::vector<Shape>{g, g};
  };
  auto groups = [](int64_t g) {
    Attrs a;
    a.set("num_groups", g);
    return a;
  };
  d.examples = {{groups(1), {{2, 4, 3, 3}, {1}, {1}}},
                {groups(2), {{2, 6, 5, 7}, {2}, {2}}},
                {groups(4), {{1, 4, 19}, {4}, {4}}},  // one channel per group
                {groups(3), {{1, 6, 2, 3, 4}, {3}, {3}}},
                {groups(2), {{1, 4, 1, 1}, {2}, {2}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
