// CUDA kernels of argmax, argmin, topk and pick (templates/cuda/kernels/
// select.inc), take, one_hot and SequenceMask (index.inc), and Pad
// (pad.inc); the reductions are in reduce_kernels.cpp. Each prints one launch from the same geometry the
// C++ printers compute (gen/ops/reduce.h, gen/ops/indexing.h).
#include <algorithm>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/indexing.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/reduce.h"

namespace hybgen {
namespace {

std::string flag(bool b) { return b ? "true" : "false"; }
std::string num(int64_t v) { return std::to_string(v) + "L"; }

// ---- argmax, argmin, topk, pick -------------------------------------------

KernelCall emit_arg(const EmitContext& ctx, bool is_min) {
  const Shape& in = ctx.in_types[0].shape;
  const AxisSplit g = split_at_axis_or_all(in, ctx.node.attrs.get_int("axis"));
  return {{"select"}, "HG_CHECK(hg_arg_reduce(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                          num(g.outer) + ", " + num(g.n) + ", " + num(g.inner) + ", " + flag(is_min) + "));"};
}

KernelCall emit_topk(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const AxisSplit g = split_at_axis_or_all(ctx.in_types[0].shape, a.get_int("axis"));
  const std::string& t = a.get_string("ret_typ");
  const int kind = t == "value" ? 0 : t == "indices" ? 1 : t == "mask" ? 2 : 3;
  const int64_t k = a.get_int("k") < 1 ? g.n : a.get_int("k");
  if (k > g.n) throw Error("topk: k exceeds the axis");
  return {{"select"}, "HG_CHECK(hg_topk(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                          (kind == 3 ? ctx.out[1] : std::string("nullptr")) + ", " + num(g.outer) + ", " + num(g.n) +
                          ", " + num(g.inner) + ", " + num(k) + ", " + flag(a.get_bool("is_ascend")) + ", " +
                          std::to_string(kind) + "));"};
}

KernelCall emit_pick(const EmitContext& ctx) {
  const AxisSplit g = split_at_axis(ctx.in_types[0].shape, ctx.node.attrs.get_int("axis"));
  return {{"select"}, "HG_CHECK(hg_pick(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] +
                          ", " + num(g.outer) + ", " + num(g.n) + ", " + num(g.inner) + ", " +
                          flag(ctx.node.attrs.get_string("mode") == "wrap") + "));"};
}

// ---- take, one_hot, SequenceMask ------------------------------------------

KernelCall emit_take(const EmitContext& ctx) {
  const AxisSplit g = split_at_axis(ctx.in_types[0].shape, ctx.node.attrs.get_int("axis"));
  return {{"index"}, "HG_CHECK(hg_take(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] +
                         ", " + num(g.outer) + ", " + num(g.n) + ", " + num(g.inner) + ", " +
                         num(ctx.in_types[1].num_elements()) + ", " +
                         flag(ctx.node.attrs.get_string("mode") == "wrap") + "));"};
}

KernelCall emit_one_hot(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  return {{"index"}, "HG_CHECK(hg_one_hot(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                         num(ctx.in_types[0].num_elements()) + ", " + num(a.get_int("depth")) + ", " +
                         cpp_float(a.get_float("on_value")) + ", " + cpp_float(a.get_float("off_value")) + "));"};
}

KernelCall emit_sequence_mask(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& s = ctx.in_types[0].shape;
  if (ctx.in.size() < 2)
    return {{"copy"}, "HG_CHECK(hg_copy(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                          num(ctx.out_types[0].num_elements()) + "));"};
  const int64_t axis = a.get_int("axis");
  if ((axis != 0 && axis != 1) || s.size() < 2) throw Error("SequenceMask: bad axis or rank");
  return {{"index"}, "HG_CHECK(hg_sequence_mask(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " +
                         ctx.out[0] + ", " + num(s[axis]) + ", " + num(s[1 - axis]) + ", " +
                         num(dims_product(s, 2, s.size())) + ", " + flag(axis == 0) + ", " +
                         cpp_float(a.get_float("value")) + "));"};
}

// ---- Pad -------------------------------------------------------------------

KernelCall emit_pad(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& in = ctx.in_types[0].shape;
  const Shape& out = ctx.out_types[0].shape;
  const auto& w = a.get_ints("pad_width");
  if (in.size() > 8 || w.size() != 2 * in.size() || out.size() != in.size()) throw Error("Pad: bad geometry");
  std::vector<int64_t> in_dims(in), out_dims(out), before;
  for (std::size_t i = 0; i < w.size(); i += 2) before.push_back(w[i]);
  in_dims.resize(8, 1);
  out_dims.resize(8, 1);
  before.resize(8, 0);
  const std::string& m = a.get_string("mode");
  const int mode = m == "constant" ? 0 : m == "edge" ? 1 : 2;
  return {{"pad"}, "HG_CHECK(hg_pad(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                       num(ctx.out_types[0].num_elements()) + ", HgPadGeometry{" + std::to_string(in.size()) + ", " +
                       cpp_int_list(in_dims) + ", " + cpp_int_list(out_dims) + ", " + cpp_int_list(before) + "}, " +
                       std::to_string(mode) + ", " + cpp_float(a.get_float("constant_value")) + "));"};
}

// float32 only: argmax, argmin and topk give positions, pick, take and
// one_hot read them, SequenceMask reads lengths, as float values that
// float16 and bfloat16 hold exactly only up to 2048 and 256.
const KernelRegistrar argmax_reg(Backend::kCuda, "argmax",
                                 OpKernel{[](const EmitContext& c) { return emit_arg(c, false); }});
const KernelRegistrar argmin_reg(Backend::kCuda, "argmin",
                                 OpKernel{[](const EmitContext& c) { return emit_arg(c, true); }});
const KernelRegistrar topk_reg(Backend::kCuda, "topk", OpKernel{emit_topk});
const KernelRegistrar pick_reg(Backend::kCuda, "pick", OpKernel{emit_pick});
const KernelRegistrar take_reg(Backend::kCuda, "take", OpKernel{emit_take});
const KernelRegistrar one_hot_reg(Backend::kCuda, "one_hot", OpKernel{emit_one_hot});
const KernelRegistrar sequence_mask_reg(Backend::kCuda, "SequenceMask", OpKernel{emit_sequence_mask});
const KernelRegistrar pad_reg(Backend::kCuda, "Pad", in_half_storage(OpKernel{emit_pad}));

}  // namespace
}  // namespace hybgen
