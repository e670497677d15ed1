// Reductions over axes (all when none given), with keepdims and exclude
// (reduce every axis except the given ones), as MXNet's broadcast_reduce ops:
// sum, mean, max, min, prod, and norm (ord 1: sum of |x|, ord 2: the
// Euclidean norm; axis and keepdims, no exclude).
#include "ops/reduce.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

std::vector<bool> reduced_axes(const Attrs& a, std::size_t rank) {
  const auto& axes = a.get_ints("axis");
  const bool exclude = a.has("exclude") && a.get_bool("exclude");
  std::vector<bool> reduced(rank, axes.empty() && !exclude);
  for (int64_t ax : axes) {
    const int axis = normalize_axis(ax, rank);
    if (reduced[axis]) throw Error("axis " + std::to_string(ax) + " is repeated");
    reduced[axis] = true;
  }
  if (exclude) std::transform(reduced.begin(), reduced.end(), reduced.begin(), [](bool r) { return !r; });
  return reduced;
}

ReduceKind reduce_kind(const std::string& op, const Attrs& a) {
  if (op == "sum") return ReduceKind::kSum;
  if (op == "mean") return ReduceKind::kMean;
  if (op == "max") return ReduceKind::kMax;
  if (op == "min") return ReduceKind::kMin;
  if (op == "prod") return ReduceKind::kProd;
  if (op == "norm") {
    const int64_t ord = a.get_int("ord");
    if (ord != 1 && ord != 2) throw Error("norm: ord " + std::to_string(ord) + " is not supported (1 or 2)");
    return ord == 1 ? ReduceKind::kNorm1 : ReduceKind::kNorm2;
  }
  throw Error("'" + op + "' is not a reduction");
}

namespace {

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

double initial_value(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax: return -std::numeric_limits<double>::infinity();
    case ReduceKind::kMin: return std::numeric_limits<double>::infinity();
    case ReduceKind::kProd: return 1.0;
    default: return 0.0;
  }
}

double combine(ReduceKind kind, double acc, double v) {
  switch (kind) {
    case ReduceKind::kMax: return v > acc || std::isnan(v) ? v : acc;
    case ReduceKind::kMin: return v < acc || std::isnan(v) ? v : acc;
    case ReduceKind::kProd: return acc * v;
    case ReduceKind::kNorm1: return acc + std::fabs(v);
    case ReduceKind::kNorm2: return acc + v * v;
    default: return acc + v;
  }
}


OpDef reduce_op(const std::string& name, const std::string& summary) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.input_names = {"data"};
  d.attrs = {{"axis", AttrKind::kInts, std::vector<int64_t>{}, "axes to reduce; empty: all", {}},
             {"keepdims", AttrKind::kBool, false, "keep reduced axes with size 1", {}}};
  if (name == "norm") {
    d.attrs.push_back({"ord", AttrKind::kInt, int64_t{2}, "1: sum of |x|; 2: Euclidean norm", {}});
    d.attrs.push_back({"out_dtype", AttrKind::kString, std::string("None"), "output dtype (float32 only)",
                       {"None", "float32"}});
  } else {
    d.attrs.push_back({"exclude", AttrKind::kBool, false, "reduce all axes except `axis`", {}});
  }
  d.fusion = FusionClass::kReduction;
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    const std::vector<int64_t> axes = a.get_ints("axis");
    const bool listed =
        std::any_of(axes.begin(), axes.end(), [&](int64_t x) { return is_first_axis(x, in[0].shape.size()); });
    const bool exclude = a.has("exclude") && a.get_bool("exclude");
    return axes.empty() || listed != exclude;
  };
  d.infer = [name](const Attrs& a, const std::vector<TensorType>& in) {
    if (in[0].shape.size() > 8) throw Error("rank above 8 is not supported");
    reduce_kind(name, a);  // checks norm's ord
    if (in[0].num_elements() == 0) throw Error(name + " of an empty tensor " + shape_str(in[0].shape));
    return std::vector<TensorType>{TensorType{output_shape(a, in[0].shape), in[0].dtype}};
  };
  d.reference = [name](const KernelIO& io) {
    const ReduceKind kind = reduce_kind(name, io.attrs);
    const Shape& in = io.in_types[0].shape;
    const auto strides = output_strides(in, reduced_axes(io.attrs, in.size()));
    const int64_t n_out = io.out_types[0].num_elements(), n_in = io.in_types[0].num_elements();
    std::vector<double> acc(static_cast<std::size_t>(n_out), initial_value(kind));
    for_each_strided(in, strides, {},
                     [&](int64_t i, int64_t o, int64_t) { acc[o] = combine(kind, acc[o], io.input<float>(0)[i]); });
    for (int64_t o = 0; o < n_out; ++o) {
      double v = acc[o];
      if (kind == ReduceKind::kMean) v = v * static_cast<double>(n_out) / static_cast<double>(n_in);
      if (kind == ReduceKind::kNorm2) v = std::sqrt(v);
      io.output<float>(0)[o] = static_cast<float>(v);
    }
  };
  register_kernel(
      Backend::kCpp, d.name, OpKernel{[name](const EmitContext& ctx) {
        const ReduceKind kind = reduce_kind(name, ctx.node.attrs);
        const Shape& in = ctx.in_types[0].shape;
        const Shape dims = in.empty() ? Shape{1} : in;
        const auto strides =
            in.empty() ? std::vector<int64_t>{0} : output_strides(in, reduced_axes(ctx.node.attrs, in.size()));
        const std::string head = "{\n  static const long dims[] = " + cpp_int_list(dims) +
                                 ";\n  static const long out_strides[] = " + cpp_int_list(strides) + ";\n  ";
        const std::string args = ctx.in[0] + ", " + ctx.out[0] + ", " + std::to_string(dims.size()) +
                                 ", dims, out_strides, " + std::to_string(ctx.out_types[0].num_elements());
        if (kind == ReduceKind::kSum || kind == ReduceKind::kMean) {
          const double scale = kind == ReduceKind::kMean ? static_cast<double>(ctx.out_types[0].num_elements()) /
                                                               static_cast<double>(ctx.in_types[0].num_elements())
                                                         : 1.0;
          return KernelCall{{"reduce"}, head + "hg_reduce_sum(" + args + ", " + cpp_float(scale) + ");\n}"};
        }
        return KernelCall{{"reduce"},
                          head + "hg_reduce_op(" + args + ", " + std::to_string(reduce_kernel_code(kind)) + ");\n}"};
      }});
  Attrs all, last_keep, exclude, middle;
  last_keep.set("axis", std::vector<int64_t>{-1});
  last_keep.set("keepdims", true);
  middle.set("axis", std::vector<int64_t>{0, 2});
  if (name == "norm") {
    Attrs ord1 = last_keep;
    ord1.set("ord", int64_t{1});
    d.examples = {{all, {{3, 4}}}, {last_keep, {{2, 3, 5}}}, {ord1, {{2, 3, 5}}}, {middle, {{3, 1, 7, 2}}}};
  } else {
    exclude.set("axis", std::vector<int64_t>{1});
    exclude.set("exclude", true);
    d.examples = {{all, {{3, 4}}}, {last_keep, {{2, 3, 5}}}, {exclude, {{2, 3, 4}}}, {middle, {{3, 1, 7, 2}}}};
  }
  // A long reduction (a CUDA block per output rather than a warp).
  if (name == "max" || name == "norm") d.examples.push_back({last_keep, {{2, 1500}}});
  return d;
}

const OpRegistrar sum(reduce_op("sum", "sum over axes"));
const OpRegistrar mean(reduce_op("mean", "mean over axes"));
const OpRegistrar max([] {
  OpDef d = reduce_op("max", "maximum over axes");
  d.aliases = {"max_axis"};
  return d;
}());
const OpRegistrar min([] {
  OpDef d = reduce_op("min", "minimum over axes");
  d.aliases = {"min_axis"};
  return d;
}());
const OpRegistrar prod(reduce_op("prod", "product over axes"));
const OpRegistrar norm(reduce_op("norm", "L1 or L2 norm over axes"));

}  // namespace

int reduce_kernel_code(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMax: return 1;
    case ReduceKind::kMin: return 2;
    case ReduceKind::kProd: return 3;
    case ReduceKind::kNorm1: return 4;
    case ReduceKind::kNorm2: return 5;
    default: return 0;
  }
}

}  // namespace hybgen
