// CUDA kernels of the row-wise ops: softmax, log_softmax, SoftmaxOutput,
// SoftmaxActivation (templates/cuda/kernels/softmax.inc), LayerNorm
// (layer_norm.inc), BatchNorm (batch_norm.inc), InstanceNorm and GroupNorm
// (group_norm.inc), L2Normalization (l2_normalization.inc), LRN (lrn.inc).
// Each views its tensor as the op's file does (gen/ops/softmax.cpp,
// layer_norm.cpp, batch_norm.cpp, group_norm.cpp, l2_normalization.cpp,
// lrn.cpp) and prints one launch with the sizes as literals.
#include <algorithm>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

std::string sizes(const AxisView& v) {
  return std::to_string(v.outer) + "L, " + std::to_string(v.n) + "L, " + std::to_string(v.inner) + "L";
}

KernelCall softmax_call(const EmitContext& ctx, const AxisView& v, double inv_temperature, bool log_output) {
  return {{"softmax"}, "HG_CHECK(hg_softmax(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " + sizes(v) +
                           ", " + cpp_float(inv_temperature) + ", " + (log_output ? "true" : "false") + "));"};
}

KernelCall emit_softmax(const EmitContext& ctx, bool log_output) {
  const Attrs& a = ctx.node.attrs;
  return softmax_call(ctx, axis_view(ctx.in_types[0].shape, a.get_int("axis")), 1.0 / a.get_float("temperature"),
                      log_output);
}

// As gen/ops/softmax.cpp's softmax_output_view.
KernelCall emit_softmax_output(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& s = ctx.in_types[0].shape;
  if (s.empty()) throw Error("SoftmaxOutput: data must have at least one axis");
  AxisView v{s[0], dims_product(s, 1, s.size()), 1};
  if (a.get_bool("preserve_shape")) {
    v = {dims_product(s, 0, s.size() - 1), s.back(), 1};
  } else if (a.get_bool("multi_output")) {
    if (s.size() < 2) throw Error("SoftmaxOutput: multi_output needs at least 2 axes");
    v = {s[0], s[1], dims_product(s, 2, s.size())};
  }
  return softmax_call(ctx, v, 1.0, false);
}

// As gen/ops/softmax.cpp's softmax_activation_view.
KernelCall emit_softmax_activation(const EmitContext& ctx) {
  const Shape& s = ctx.in_types[0].shape;
  if (s.size() < 2) throw Error("SoftmaxActivation: data must have at least two axes");
  const AxisView v = ctx.node.attrs.get_string("mode") == "channel" ? AxisView{s[0], s[1], dims_product(s, 2, s.size())}
                                                                     : AxisView{s[0], dims_product(s, 1, s.size()), 1};
  return softmax_call(ctx, v, 1.0, false);
}

KernelCall emit_layer_norm(const EmitContext& ctx) {
  const AxisView v = axis_view(ctx.in_types[0].shape, ctx.node.attrs.get_int("axis"));
  return {{"layer_norm"}, "HG_CHECK(hg_layer_norm(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " +
                              ctx.in[2] + ", " + ctx.out[0] + ", " + sizes(v) + ", " +
                              cpp_float(ctx.node.attrs.get_float("eps")) + "));"};
}

KernelCall emit_batch_norm(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const AxisView v = axis_view(ctx.in_types[0].shape, a.get_int("axis"));
  return {{"batch_norm"}, "HG_CHECK(hg_batch_norm(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " +
                              ctx.in[2] + ", " + ctx.in[3] + ", " + ctx.in[4] + ", " + ctx.out[0] + ", " + sizes(v) +
                              ", " + cpp_float(a.get_float("eps")) + ", " + (a.get_bool("fix_gamma") ? "true" : "false") +
                              "));"};
}

// InstanceNorm: rows (n, c) of the spatial values, gamma per channel;
// GroupNorm: rows (n, group) of C/groups channels' values, gamma per group.
KernelCall emit_group_norm(const EmitContext& ctx, bool instance) {
  const Shape& s = ctx.in_types[0].shape;
  if (s.size() < 3) throw Error("InstanceNorm/GroupNorm: data must have at least 3 dims");
  const int64_t classes = instance ? s[1] : ctx.node.attrs.get_int("num_groups");
  if (classes <= 0 || s[1] % classes) throw Error("GroupNorm: num_groups must divide the channels");
  const int64_t rows = s[0] * classes, n = s[1] / classes * dims_product(s, 2, s.size());
  return {{"group_norm"}, "HG_CHECK(hg_group_norm(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " +
                              ctx.in[2] + ", " + ctx.out[0] + ", " + std::to_string(rows) + "L, " + std::to_string(n) +
                              "L, " + std::to_string(classes) + "L, " + cpp_float(ctx.node.attrs.get_float("eps")) +
                              "));"};
}

// As gen/ops/l2_normalization.cpp's view.
KernelCall emit_l2_normalization(const EmitContext& ctx) {
  const Shape& s = ctx.in_types[0].shape;
  const std::string& mode = ctx.node.attrs.get_string("mode");
  if (s.size() < (mode == "instance" ? 2u : 3u)) throw Error("L2Normalization: data has too few dims for " + mode);
  const AxisView v = mode == "instance" ? AxisView{s[0], dims_product(s, 1, s.size()), 1}
                     : mode == "channel" ? AxisView{s[0], s[1], dims_product(s, 2, s.size())}
                                         : AxisView{s[0] * s[1], dims_product(s, 2, s.size()), 1};
  return {{"l2_normalization"}, "HG_CHECK(hg_l2_normalization(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] +
                                    ", " + sizes(v) + ", " + cpp_float(ctx.node.attrs.get_float("eps")) + "));"};
}

KernelCall emit_lrn(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& s = ctx.in_types[0].shape;
  if (s.size() != 4) throw Error("LRN: data must be NCHW");
  const int64_t nsize = a.get_int("nsize");
  return {{"lrn"}, "HG_CHECK(hg_lrn(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                       std::to_string(s[0]) + "L, " + std::to_string(s[1]) + "L, " + std::to_string(s[2] * s[3]) +
                       "L, " + std::to_string(nsize) + "L, " +
                       cpp_float(a.get_float("alpha") / static_cast<double>(nsize)) + ", " +
                       cpp_float(a.get_float("beta")) + ", " + cpp_float(a.get_float("knorm")) + "));"};
}

const KernelRegistrar softmax_reg(Backend::kCuda, "softmax", in_half_storage(OpKernel{[](const EmitContext& c) {
                                    return emit_softmax(c, false);
                                  }}));
const KernelRegistrar log_softmax_reg(Backend::kCuda, "log_softmax", in_half_storage(OpKernel{[](const EmitContext& c) {
                                        return emit_softmax(c, true);
                                      }}));
const KernelRegistrar softmax_output_reg(Backend::kCuda, "SoftmaxOutput",
                                         in_half_storage(OpKernel{emit_softmax_output}));
const KernelRegistrar softmax_activation_reg(Backend::kCuda, "SoftmaxActivation",
                                             in_half_storage(OpKernel{emit_softmax_activation}));
const KernelRegistrar layer_norm_reg(Backend::kCuda, "LayerNorm", in_half_storage(OpKernel{emit_layer_norm}));
const KernelRegistrar batch_norm_reg(Backend::kCuda, "BatchNorm", in_half_storage(OpKernel{emit_batch_norm}));
const KernelRegistrar instance_norm_reg(Backend::kCuda, "InstanceNorm",
                                        in_half_storage(OpKernel{
                                            [](const EmitContext& c) { return emit_group_norm(c, true); }}));
const KernelRegistrar group_norm_reg(Backend::kCuda, "GroupNorm", in_half_storage(OpKernel{[](const EmitContext& c) {
                                       return emit_group_norm(c, false);
                                     }}));
const KernelRegistrar l2_normalization_reg(Backend::kCuda, "L2Normalization",
                                           in_half_storage(OpKernel{emit_l2_normalization}));
const KernelRegistrar lrn_reg(Backend::kCuda, "LRN", in_half_storage(OpKernel{emit_lrn}));

}  // namespace
}  // namespace hybgen
