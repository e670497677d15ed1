// sum and mean over axes (all when none given), with keepdims and exclude
// (reduce every axis except the given ones), as MXNet's broadcast_reduce ops.
#include <algorithm>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

std::vector<bool> reduced_axes(const Attrs& a, std::size_t rank) {
  const auto& axes = a.get_ints("axis");
  const bool exclude = a.get_bool("exclude");
  std::vector<bool> reduced(rank, axes.empty() && !exclude);
  for (int64_t ax : axes) reduced[normalize_axis(ax, rank)] = true;
  if (exclude) std::transform(reduced.begin(), reduced.end(), reduced.begin(), [](bool r) { return !r; });
  return reduced;
}

// Output element offset of each input axis (0 along reduced axes).
std::vector<int64_t> output_strides(const Shape& in, const std::vector<bool>& reduced) {
  std::vector<int64_t> strides(in.size(), 0);
  int64_t stride = 1;
  for (int i = static_cast<int>(in.size()) - 1; i >= 0; --i)
    if (!reduced[i]) {
      strides[i] = stride;
      stride *= in[i];
    }
  return strides;
}

Shape output_shape(const Attrs& a, const Shape& in) {
  const auto reduced = reduced_axes(a, in.size());
  Shape out;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i]) out.push_back(in[i]);
    else if (a.get_bool("keepdims")) out.push_back(1);
  }
  return out;
}

OpDef reduce_op(const std::string& name, bool mean) {
  OpDef d;
  d.name = name;
  d.summary = mean ? "mean over axes" : "sum over axes";
  d.input_names = {"data"};
  d.attrs = {{"axis", AttrKind::kInts, std::vector<int64_t>{}, "axes to reduce; empty: all", {}},
             {"keepdims", AttrKind::kBool, false, "keep reduced axes with size 1", {}},
             {"exclude", AttrKind::kBool, false, "reduce all axes except `axis`", {}}};
  d.fusion = FusionClass::kReduction;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (in[0].shape.size() > 8) throw Error("rank above 8 is not supported");
    return std::vector<TensorType>{TensorType{output_shape(a, in[0].shape), in[0].dtype}};
  };
  d.reference = [mean](const KernelIO& io) {
    const Shape& in = io.in_types[0].shape;
    const auto strides = output_strides(in, reduced_axes(io.attrs, in.size()));
    const int64_t n_out = io.out_types[0].num_elements(), n_in = io.in_types[0].num_elements();
    std::vector<double> acc(static_cast<std::size_t>(n_out), 0.0);
    for_each_strided(in, strides, {}, [&](int64_t i, int64_t o, int64_t) { acc[o] += io.in[0][i]; });
    const double scale = mean ? static_cast<double>(n_out) / static_cast<double>(n_in) : 1.0;
    for (int64_t o = 0; o < n_out; ++o) io.out[0][o] = static_cast<float>(acc[o] * scale);
  };
  d.emit_cpp = [mean](const EmitContext& ctx) {
    const Shape& in = ctx.in_types[0].shape;
    const Shape dims = in.empty() ? Shape{1} : in;
    const auto strides = in.empty() ? std::vector<int64_t>{0} : output_strides(in, reduced_axes(ctx.node.attrs, in.size()));
    const double scale =
        mean ? static_cast<double>(ctx.out_types[0].num_elements()) / static_cast<double>(ctx.in_types[0].num_elements())
             : 1.0;
    return KernelCall{{"reduce"}, "{\n  static const long dims[] = " + cpp_int_list(dims) +
                                   ";\n  static const long out_strides[] = " + cpp_int_list(strides) +
                                   ";\n  hg_reduce_sum(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                                   std::to_string(dims.size()) + ", dims, out_strides, " +
                                   std::to_string(ctx.out_types[0].num_elements()) + ", " + cpp_float(scale) + ");\n}"};
  };
  Attrs all, last_keep, exclude;
  last_keep.set("axis", std::vector<int64_t>{-1});
  last_keep.set("keepdims", true);
  exclude.set("axis", std::vector<int64_t>{1});
  exclude.set("exclude", true);
  d.examples = {{all, {{3, 4}}}, {last_keep, {{2, 3, 5}}}, {exclude, {{2, 3, 4}}}};
  return d;
}

const OpRegistrar sum(reduce_op("sum", false));
const OpRegistrar mean(reduce_op("mean", true));

}  // namespace
}  // namespace hybgen
