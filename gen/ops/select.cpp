// Selection along an axis, MXNet's broadcast_reduce_op_index and ordering
// ops: argmax / argmin (indices as floats, the first of equal values),
// topk (k first in descending or ascending order: values, indices, both, or
// a 0/1 mask) and pick (one element per position along the axis, the index
// read from a float tensor, clipped or wrapped).
#include <algorithm>
#include <cmath>

#include "ir/error.h"
#include "ops/indexing.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

AxisSplit split_at_axis(const Shape& shape, int64_t axis) {
  const int a = normalize_axis(axis, shape.size());
  return {dims_product(shape, 0, a), shape[a], dims_product(shape, a + 1, shape.size())};
}

AxisSplit split_at_axis_or_all(const Shape& shape, int64_t axis) {
  if (axis == kSliceNone) return {1, num_elements(shape), 1};
  return split_at_axis(shape, axis);
}

int64_t truncate_index(float v) {
  if (std::isnan(v)) return 0;
  if (v >= 9.0e18f) return 9000000000000000000LL;
  if (v <= -9.0e18f) return -9000000000000000000LL;
  return static_cast<int64_t>(v);
}

int64_t bound_index(float v, int64_t n, bool wrap) {
  int64_t j = truncate_index(v);
  if (wrap) {
    j %= n;
    return j < 0 ? j + n : j;
  }
  return j < 0 ? 0 : (j >= n ? n - 1 : j);
}

namespace {

std::string flag(bool b) { return b ? "true" : "false"; }

// ---- argmax, argmin --------------------------------------------------------

AxisSplit arg_split(const Attrs& a, const Shape& in) { return split_at_axis_or_all(in, a.get_int("axis")); }

OpDef arg_op(const std::string& name, bool is_min) {
  OpDef d;
  d.name = name;
  d.summary = std::string("index of the first ") + (is_min ? "smallest" : "largest") + " value along an axis (as float)";
  d.input_names = {"data"};
  d.attrs = {{"axis", AttrKind::kInt, kSliceNone, "the axis; None: over all elements", {}},
             {"keepdims", AttrKind::kBool, false, "keep the axis with size 1", {}}};
  d.fusion = FusionClass::kReduction;
  d.mixes_first_axis = mixes_along_axis_attr("axis");
  d.infer = [name](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape& s = in[0].shape;
    if (num_elements(s) == 0) throw Error(name + " of an empty tensor " + shape_str(s));
    Shape out;
    if (a.get_int("axis") == kSliceNone) {
      out = a.get_bool("keepdims") ? Shape(s.size(), 1) : Shape{1};
    } else {
      if (s.empty()) throw Error(name + " over an axis of a scalar");
      const int axis = normalize_axis(a.get_int("axis"), s.size());
      out = s;
      if (a.get_bool("keepdims")) out[axis] = 1;
      else out.erase(out.begin() + axis);
    }
    return std::vector<TensorType>{TensorType{out, in[0].dtype}};
  };
  d.reference = [is_min](const KernelIO& io) {
    const AxisSplit g = arg_split(io.attrs, io.in_types[0].shape);
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) {
        const float* row = io.input<float>(0) + o * g.n * g.inner + i;
        int64_t at = 0;
        for (int64_t k = 1; k < g.n; ++k)
          if (is_min ? row[k * g.inner] < row[at * g.inner] : row[k * g.inner] > row[at * g.inner]) at = k;
        io.output<float>(0)[o * g.inner + i] = static_cast<float>(at);
      }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[is_min](const EmitContext& ctx) {
                    const AxisSplit g = arg_split(ctx.node.attrs, ctx.in_types[0].shape);
                    return KernelCall{{"select"},
                                      "hg_arg_reduce(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                                          std::to_string(g.outer) + ", " + std::to_string(g.n) + ", " +
                                          std::to_string(g.inner) + ", " + flag(is_min) + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return static_cast<double>(in[0].num_elements());
  };
  Attrs all, axis1, last_keep;
  axis1.set("axis", int64_t{1});
  last_keep.set("axis", int64_t{-1});
  last_keep.set("keepdims", true);
  d.examples = {{all, {{3, 5}}}, {axis1, {{2, 7, 3}}}, {last_keep, {{4, 1, 6}}}, {axis1, {{5, 1}}}};
  return d;
}

const OpRegistrar argmax(arg_op("argmax", false));
const OpRegistrar argmin(arg_op("argmin", true));

// ---- topk ------------------------------------------------------------------

int topk_kind(const Attrs& a) {
  const std::string& t = a.get_string("ret_typ");
  return t == "value" ? 0 : t == "indices" ? 1 : t == "mask" ? 2 : 3;
}

// k for an axis of n (k < 1: all of it, MXNet's full sort).
int64_t topk_k(const Attrs& a, int64_t n) {
  const int64_t k = a.get_int("k");
  if (k > n) throw Error("topk: k " + std::to_string(k) + " exceeds the axis's " + std::to_string(n) + " elements");
  return k < 1 ? n : k;
}

bool before(float va, int64_t ia, float vb, int64_t ib, bool ascend) {
  if (va == vb) return ia < ib;
  return ascend ? va < vb : va > vb;
}

const OpRegistrar topk([] {
  OpDef d;
  d.name = "topk";
  d.mixes_first_axis = mixes_along_axis_attr("axis");
  d.summary = "the k largest (or smallest) elements along an axis: values, indices (as float), both, or a mask";
  d.input_names = {"data"};
  d.attrs = {{"axis", AttrKind::kInt, int64_t{-1}, "the axis; None: the flattened input", {}},
             {"k", AttrKind::kInt, int64_t{1}, "how many; below 1: the whole axis", {}},
             {"ret_typ", AttrKind::kString, std::string("indices"), "what to return", {"value", "indices", "mask", "both"}},
             {"is_ascend", AttrKind::kBool, false, "the smallest first", {}},
             {"dtype", AttrKind::kString, std::string("float32"), "the indices' type (stored as float32 values)",
              {"float16", "float32", "float64", "uint8", "int32", "int64"}}};
  d.output_arity = [](const Attrs& a) { return topk_kind(a) == 3 ? 2 : 1; };
  d.fusion = FusionClass::kOpaque;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape& s = in[0].shape;
    if (s.empty() || num_elements(s) == 0) throw Error("topk needs a non-empty tensor with an axis, got " + shape_str(s));
    const int kind = topk_kind(a);
    Shape out = s;
    if (a.get_int("axis") == kSliceNone) {
      out = {topk_k(a, num_elements(s))};  // the flattened input, as MXNet's axis=None
    } else {
      const int axis = normalize_axis(a.get_int("axis"), s.size());
      out[axis] = topk_k(a, s[axis]);
    }
    if (kind == 2) return std::vector<TensorType>{in[0]};
    if (kind == 3) return std::vector<TensorType>{TensorType{out, in[0].dtype}, TensorType{out, in[0].dtype}};
    return std::vector<TensorType>{TensorType{out, in[0].dtype}};
  };
  d.reference = [](const KernelIO& io) {
    const AxisSplit g = arg_split(io.attrs, io.in_types[0].shape);
    const int64_t k = topk_k(io.attrs, g.n);
    const bool ascend = io.attrs.get_bool("is_ascend");
    const int kind = topk_kind(io.attrs);
    std::vector<int64_t> order(static_cast<std::size_t>(g.n));
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) {
        const float* row = io.input<float>(0) + o * g.n * g.inner + i;
        for (int64_t m = 0; m < g.n; ++m) order[m] = m;
        std::stable_sort(order.begin(), order.end(), [&](int64_t p, int64_t q) {
          return before(row[p * g.inner], p, row[q * g.inner], q, ascend);
        });
        for (int64_t j = 0; j < k; ++j) {
          const int64_t to = (o * k + j) * g.inner + i;
          if (kind == 0 || kind == 3) io.output<float>(0)[to] = row[order[j] * g.inner];
          if (kind == 1) io.output<float>(0)[to] = static_cast<float>(order[j]);
          if (kind == 3) io.output<float>(1)[to] = static_cast<float>(order[j]);
        }
        if (kind == 2) {
          for (int64_t m = 0; m < g.n; ++m) io.output<float>(0)[(o * g.n + m) * g.inner + i] = 0.0f;
          for (int64_t j = 0; j < k; ++j) io.output<float>(0)[(o * g.n + order[j]) * g.inner + i] = 1.0f;
        }
      }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const AxisSplit g = arg_split(ctx.node.attrs, ctx.in_types[0].shape);
                    const int kind = topk_kind(ctx.node.attrs);
                    return KernelCall{{"select"},
                                      "hg_topk(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                                          (kind == 3 ? ctx.out[1] : std::string("nullptr")) + ", " +
                                          std::to_string(g.outer) + ", " + std::to_string(g.n) + ", " +
                                          std::to_string(g.inner) + ", " + std::to_string(topk_k(ctx.node.attrs, g.n)) +
                                          ", " + flag(ctx.node.attrs.get_bool("is_ascend")) + ", " +
                                          std::to_string(kind) + ");"};
                  }});
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const AxisSplit g = arg_split(a, in[0].shape);
    return static_cast<double>(in[0].num_elements()) * static_cast<double>(topk_k(a, g.n));
  };
  auto attrs = [](int64_t axis, int64_t k, const std::string& ret, bool ascend) {
    Attrs a;
    a.set("axis", axis);
    a.set("k", k);
    a.set("ret_typ", ret);
    a.set("is_ascend", ascend);
    return a;
  };
  d.examples = {{attrs(-1, 3, "value", false), {{2, 7}}},
                {attrs(1, 2, "indices", true), {{2, 5, 3}}},
                {attrs(0, 2, "both", false), {{4, 3}}},
                {attrs(-1, 2, "mask", false), {{3, 5}}},
                {attrs(-1, 0, "value", true), {{2, 1, 6}}},
                {Attrs{}, {{9}}},
                {attrs(kSliceNone, 4, "both", false), {{3, 5}}},
                {attrs(kSliceNone, 3, "mask", true), {{2, 4}}}};
  return d;
}());

// ---- pick ------------------------------------------------------------------

Shape pick_output(const Attrs& a, const Shape& s) {
  const int axis = normalize_axis(a.get_int("axis"), s.size());
  Shape out = s;
  if (a.get_bool("keepdims")) out[axis] = 1;
  else out.erase(out.begin() + axis);
  return out;
}

const OpRegistrar pick([] {
  OpDef d;
  d.name = "pick";
  d.mixes_first_axis = mixes_along_axis_attr("axis");
  d.summary = "one element per position along an axis, at an index from a float tensor";
  d.input_names = {"data", "index"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"axis", AttrKind::kInt, int64_t{-1}, "the axis to pick along", {}},
             {"keepdims", AttrKind::kBool, false, "keep the axis with size 1", {}},
             {"mode", AttrKind::kString, std::string("clip"), "out-of-range indices: clipped or wrapped", {"clip", "wrap"}}};
  d.fusion = FusionClass::kOpaque;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape& s = in[0].shape;
    if (s.empty() || num_elements(s) == 0) throw Error("pick needs a non-empty tensor with an axis, got " + shape_str(s));
    const Shape out = pick_output(a, s);
    Shape kept = s;
    kept[normalize_axis(a.get_int("axis"), s.size())] = 1;
    Shape dropped = kept;
    dropped.erase(dropped.begin() + normalize_axis(a.get_int("axis"), s.size()));
    if (in[1].shape != kept && in[1].shape != dropped)
      throw Error("pick: index has shape " + shape_str(in[1].shape) + ", expected " + shape_str(dropped) + " or " +
                  shape_str(kept));
    return std::vector<TensorType>{TensorType{out, in[0].dtype}};
  };
  d.reference = [](const KernelIO& io) {
    const AxisSplit g = split_at_axis(io.in_types[0].shape, io.attrs.get_int("axis"));
    const bool wrap = io.attrs.get_string("mode") == "wrap";
    for (int64_t o = 0; o < g.outer; ++o)
      for (int64_t i = 0; i < g.inner; ++i) {
        const int64_t j = bound_index(io.input<float>(1)[o * g.inner + i], g.n, wrap);
        io.output<float>(0)[o * g.inner + i] = io.input<float>(0)[(o * g.n + j) * g.inner + i];
      }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const AxisSplit g = split_at_axis(ctx.in_types[0].shape, ctx.node.attrs.get_int("axis"));
                    return KernelCall{{"select"},
                                      "hg_pick(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] + ", " +
                                          std::to_string(g.outer) + ", " + std::to_string(g.n) + ", " +
                                          std::to_string(g.inner) + ", " +
                                          flag(ctx.node.attrs.get_string("mode") == "wrap") + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs last, wrap_keep, axis0;
  wrap_keep.set("axis", int64_t{1});
  wrap_keep.set("keepdims", true);
  wrap_keep.set("mode", std::string("wrap"));
  axis0.set("axis", int64_t{0});
  d.examples = {{last, {{4, 5}, {4}}}, {wrap_keep, {{2, 3, 4}, {2, 1, 4}}}, {axis0, {{3, 2}, {2}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
