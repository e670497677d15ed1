// ONNX converters of the data-movement and reduction ops on runtime tensors,
// whose shape operands (indices, starts/ends, pads, repeats, axes) must be
// import-time constants: Gather (-> take), Slice (-> slice), Split (->
// slice_axis per output), Pad (constant, edge, reflect), Expand (->
// broadcast_to), Tile, DepthToSpace (DCR and CRD) / SpaceToDepth,
// ReduceMean/Sum/Max/Min/Prod/L1/L2/SumSquare/LogSum/LogSumExp (axes by attribute or input by
// opset, keepdims, noop_with_empty_axes), Hardmax, and ArgMax/ArgMin (indices as
// floats, declared INT64: a graph output of them is refused).
// Nodes whose inputs are all constants are evaluated at import through these
// same converters (io/onnx/onnx_ops.h).
#include <algorithm>
#include <string>
#include <vector>

#include "io/onnx/onnx_ops.h"
#include "ir/error.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

using onnx_util::normalize_axis;
using onnx_util::attrs_of;
using onnx_util::int_list;
using onnx_util::reshape;

// ---- Gather ------------------------------------------------------------------

// Gather of a runtime tensor at constant indices: take along the axis.
// Negative indices count from the end; out-of-range ones are an error.
const OnnxConverterRegistrar gather_reg(OnnxConverter("Gather")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      if (!c.is_constant(1)) c.fail("indices computed at run time are not supported (only constant indices)");
      const int64_t axis = normalize_axis(c.attr_int("axis", 0), static_cast<int64_t>(x.size()), "Gather axis");
      const OnnxConst& idx = c.constant(1);
      const int64_t dim = x[static_cast<std::size_t>(axis)];
      std::vector<float> values;
      for (int64_t v : idx.as_ints()) {
        if (v < -dim || v >= dim) c.fail("index " + std::to_string(v) + " is out of range for axis size " + std::to_string(dim));
        values.push_back(static_cast<float>(v < 0 ? v + dim : v));
      }
      Shape ishape = idx.shape;
      if (ishape.empty()) ishape = {1};
      const std::string indices = c.add_constant(ishape, values, "indices");
      Attrs a;
      a.set("axis", axis);
      a.set("mode", std::string("clip"));
      const std::string y = c.add_node("take", a, {c.input(0), indices}, "take");
      Shape out(x.begin(), x.begin() + axis);
      out.insert(out.end(), idx.shape.begin(), idx.shape.end());
      out.insert(out.end(), x.begin() + axis + 1, x.end());
      if (out.empty() && !c.at_import())
        c.fail("gathering one element of a 1-D tensor gives a scalar, which is not supported");
      c.set_output(0, reshape(c, y, out, "shape"));
    })
    .handles({"axis"}));

// ---- Slice -------------------------------------------------------------------

// ONNX Slice on one axis: start and end clamped as the spec says, by the sign of the step.
void clamp_slice(int64_t dim, int64_t step, int64_t* start, int64_t* end) {
  if (*start < 0) *start += dim;
  if (*end < 0) *end += dim;
  if (step > 0) {
    *start = std::clamp<int64_t>(*start, 0, dim);
    *end = std::clamp<int64_t>(*end, 0, dim);
  } else {
    *start = std::clamp<int64_t>(*start, 0, dim - 1);
    *end = std::clamp<int64_t>(*end, -1, dim - 1);
  }
}

const OnnxConverterRegistrar slice_reg(OnnxConverter("Slice")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      const int64_t rank = static_cast<int64_t>(x.size());
      onnx_util::SliceArgs args = onnx_util::slice_args(c);
      std::vector<int64_t> &starts = args.starts, &ends = args.ends, &axes = args.axes, &steps = args.steps;
      if (axes.empty())
        for (std::size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
      if (steps.empty()) steps.assign(starts.size(), 1);
      if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
        c.fail("starts " + int_list(starts) + ", ends " + int_list(ends) + ", axes " + int_list(axes) + " and steps " +
               int_list(steps) + " differ in length");
      std::vector<int64_t> begin(x.size(), kSliceNone), end(x.size(), kSliceNone), step(x.size(), 1);
      std::vector<bool> seen(x.size(), false);
      Shape out = x;
      for (std::size_t i = 0; i < starts.size(); ++i) {
        const int64_t ax = normalize_axis(axes[i], rank, "Slice axes");
        if (seen[static_cast<std::size_t>(ax)]) c.fail("axes " + int_list(axes) + " repeat an axis");
        seen[static_cast<std::size_t>(ax)] = true;
        const int64_t dim = x[static_cast<std::size_t>(ax)];
        if (steps[i] == 0) c.fail("steps " + int_list(steps) + " has a 0");
        // A step beyond the axis takes one element as a step of the axis size does (and cannot overflow).
        const int64_t st = std::clamp<int64_t>(steps[i], -dim, dim);
        int64_t s = starts[i], e = ends[i];
        clamp_slice(dim, st, &s, &e);
        const int64_t count = st > 0 ? (e > s ? (e - s - 1) / st + 1 : 0) : (s > e ? (s - e - 1) / -st + 1 : 0);
        out[static_cast<std::size_t>(ax)] = std::max<int64_t>(count, 0);
        if (count <= 0 && !c.at_import())
          c.fail("axis " + std::to_string(ax) + " slices to nothing (an empty tensor is not supported)");
        begin[static_cast<std::size_t>(ax)] = s;
        end[static_cast<std::size_t>(ax)] = e < 0 ? kSliceNone : e;
        step[static_cast<std::size_t>(ax)] = st;
      }
      // At import an empty result is fine: an empty constant of the input's dtype.
      if (num_elements(out) == 0) return c.set_output(0, c.add_constant(out, {}, "empty"), c.dtype(0));
      Attrs a;
      a.set("begin", begin);
      a.set("end", end);
      a.set("step", step);
      c.set_output(0, c.add_node("slice", a, {c.input(0)}));
    })
    .handles({"starts", "ends", "axes"}));

// ---- Split -------------------------------------------------------------------

const OnnxConverterRegistrar split_reg(OnnxConverter("Split")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      const int64_t axis = normalize_axis(c.attr_int("axis", 0), static_cast<int64_t>(x.size()), "Split axis");
      const int64_t dim = x[static_cast<std::size_t>(axis)];
      std::vector<int64_t> split;
      if (c.opset() < 13) split = c.attr_ints("split", {});
      else if (c.has_input(1)) split = c.constant(1).as_ints();
      const int64_t outputs = c.num_outputs();
      if (split.empty()) {
        // Equal parts; from opset 18 num_outputs may leave a smaller last one.
        const int64_t parts = c.attr_int("num_outputs", outputs);
        if (parts != outputs) c.fail("num_outputs " + std::to_string(parts) + " but " + std::to_string(outputs) + " outputs");
        const int64_t size = (dim + parts - 1) / parts;
        if (c.opset() < 18 && dim % parts) c.fail("axis size " + std::to_string(dim) + " does not split in " + std::to_string(parts));
        for (int64_t i = 0, left = dim; i < parts; ++i, left -= size) split.push_back(std::min(size, left));
      }
      if (static_cast<int64_t>(split.size()) != outputs)
        c.fail("split " + int_list(split) + " for " + std::to_string(outputs) + " outputs");
      int64_t at = 0;
      for (std::size_t i = 0; i < split.size(); ++i) {
        if (split[i] <= 0 || split[i] > dim)
          c.fail("split " + int_list(split) + " has a part of size " + std::to_string(split[i]));
        const int64_t from = at;
        at += split[i];
        if (at > dim) c.fail("split " + int_list(split) + " is longer than the axis (" + std::to_string(dim) + ")");
        if (!c.has_output(static_cast<int>(i))) continue;
        Attrs a;
        a.set("axis", axis);
        a.set("begin", from);
        a.set("end", at);
        c.set_output(static_cast<int>(i), c.add_node("slice_axis", a, {c.input(0)}, std::to_string(i)));
      }
      if (at != dim) c.fail("split " + int_list(split) + " does not sum to the axis size " + std::to_string(dim));
    })
    .handles({"axis", "split", "num_outputs"}));

// ---- Pad ---------------------------------------------------------------------

const OnnxConverterRegistrar pad_reg(OnnxConverter("Pad")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      const std::size_t rank = x.size();
      std::vector<int64_t> pads;
      double value = 0.0;
      std::vector<int64_t> axes;
      if (c.opset() < 11) {
        pads = c.attr_ints("pads");
        value = c.attr_float("value", 0.0);
      } else {
        pads = c.constant(1).as_ints();
        if (c.has_input(2)) {
          const OnnxConst& v = c.constant(2);
          if (v.size() != 1) c.fail("constant_value must be a scalar");
          value = v.at_double(0);
        }
        if (c.has_input(3)) axes = c.constant(3).as_ints();
      }
      if (axes.empty())
        for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
      if (pads.size() != 2 * axes.size())
        c.fail("pads " + int_list(pads) + " needs 2 values per padded axis (" + std::to_string(axes.size()) + ")");
      std::vector<int64_t> width(2 * rank, 0);
      bool any = false;
      for (std::size_t i = 0; i < axes.size(); ++i) {
        const int64_t ax = normalize_axis(axes[i], static_cast<int64_t>(rank), "Pad axes");
        const int64_t lo = pads[i], hi = pads[i + axes.size()];
        if (lo < 0 || hi < 0) c.fail("negative pads " + int_list(pads) + " (cropping) are not supported");
        width[2 * static_cast<std::size_t>(ax)] = lo;
        width[2 * static_cast<std::size_t>(ax) + 1] = hi;
        any = any || lo || hi;
      }
      const std::string mode = c.attr_string("mode", "constant");
      if (!any) return c.set_output(0, c.add_node("identity", {}, {c.input(0)}));
      Attrs a;
      a.set("mode", mode);
      a.set("pad_width", width);
      a.set("constant_value", value);
      c.set_output(0, c.add_node("Pad", a, {c.input(0)}));
    })
    .handles({"mode", "pads", "value"})
    .checks([](OnnxCheck& k) {
      const std::string mode = k.attr_string("mode", "constant");
      if (mode != "constant" && mode != "edge" && mode != "reflect")
        k.refuse("mode", "'" + mode + "' is not supported (constant, edge and reflect are)");
    }));

// ---- Expand, Tile ------------------------------------------------------------

const OnnxConverterRegistrar expand_reg(OnnxConverter("Expand").converts([](OnnxContext& c) {
  const Shape x = c.shape(0);
  const std::vector<int64_t> spec = c.constant(1).as_ints();
  for (int64_t d : spec)
    if (d < 1) c.fail("shape " + int_list(spec) + " has a dimension below 1");
  const Shape out = onnx_util::broadcast_shapes(x, Shape(spec.begin(), spec.end()), c.where() + ": shape");
  if (out == x) return c.set_output(0, c.add_node("identity", {}, {c.input(0)}));
  Shape padded(out.size() - x.size(), 1);
  padded.insert(padded.end(), x.begin(), x.end());
  const std::string v = reshape(c, c.input(0), padded, "rank");
  c.set_output(0, c.add_node("broadcast_to", attrs_of("shape", out), {v}, "expand"));
}));

const OnnxConverterRegistrar tile_reg(OnnxConverter("Tile").converts([](OnnxContext& c) {
  const Shape x = c.shape(0);
  const std::vector<int64_t> reps = c.constant(1).as_ints();
  if (reps.size() != x.size()) c.fail("repeats " + int_list(reps) + " needs one value per axis of " + shape_str(x));
  for (int64_t r : reps)
    if (r < 1) c.fail("repeats " + int_list(reps) + " must be at least 1 (an empty tensor is not supported)");
  c.set_output(0, c.add_node("tile", attrs_of("reps", reps), {c.input(0)}));
}));

// ---- DepthToSpace / SpaceToDepth ---------------------------------------------

const OnnxConverterRegistrar depth_to_space_reg(OnnxConverter("DepthToSpace")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      const int64_t b = c.attr_int("blocksize");
      if (x.size() != 4) c.fail("input " + shape_str(x) + " must be NCHW");
      if (b < 1 || b > x[1] || x[1] % (b * b)) c.fail("blocksize " + std::to_string(b) + " does not divide the channels");
      const std::string mode = c.attr_string("mode", "DCR");
      if (mode == "DCR") return c.set_output(0, c.add_node("depth_to_space", attrs_of("block_size", b), {c.input(0)}));
      // CRD: (N, C/b², b, b, H, W) -> (N, C/b², H, b, W, b).
      const int64_t cc = x[1] / (b * b);
      const std::string v = reshape(c, c.input(0), {x[0], cc, b, b, x[2], x[3]}, "split");
      const std::string t =
          c.add_node("transpose", attrs_of("axes", std::vector<int64_t>{0, 1, 4, 2, 5, 3}), {v}, "transpose");
      c.set_output(0, reshape(c, t, {x[0], cc, x[2] * b, x[3] * b}, "merge"));
    })
    .handles({"blocksize", "mode"})
    .checks([](OnnxCheck& k) {
      const std::string mode = k.attr_string("mode", "DCR");
      if (mode != "DCR" && mode != "CRD") k.refuse("mode", "must be DCR or CRD");
    }));

const OnnxConverterRegistrar space_to_depth_reg(OnnxConverter("SpaceToDepth")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      const int64_t b = c.attr_int("blocksize");
      if (x.size() != 4 || b < 1 || x[2] % b || x[3] % b)
        c.fail("blocksize " + std::to_string(b) + " does not divide the spatial axes of " + shape_str(x));
      c.set_output(0, c.add_node("space_to_depth", attrs_of("block_size", b), {c.input(0)}));
    })
    .handles({"blocksize"}));

// ---- reductions --------------------------------------------------------------

// The axes of a reduction: an attribute before the opset where they became
// an input (13 for ReduceSum, 18 for the others). Empty: every axis, or
// none with noop_with_empty_axes (`noop`).
struct ReduceAxes {
  std::vector<int64_t> axes;  // normalized, ascending
  Shape out;                  // the ONNX output shape
  bool noop = false;
};

ReduceAxes reduce_axes(OnnxContext& c, int64_t axes_input_since) {
  const Shape x = c.shape(0);
  const int64_t rank = static_cast<int64_t>(x.size());
  std::vector<int64_t> axes;
  if (c.opset() < axes_input_since) axes = c.attr_ints("axes", {});
  else if (c.has_input(1)) axes = c.constant(1).as_ints();
  const bool keep = c.attr_int("keepdims", 1) != 0;
  ReduceAxes r;
  if (axes.empty() && c.attr_int("noop_with_empty_axes", 0) != 0) {
    r.noop = true;
    return r;
  }
  std::vector<bool> reduced(x.size(), axes.empty());
  for (int64_t a : axes) reduced[static_cast<std::size_t>(normalize_axis(a, rank, c.op_type() + " axes"))] = true;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (reduced[i]) r.axes.push_back(static_cast<int64_t>(i));
    if (!reduced[i]) r.out.push_back(x[i]);
    else if (keep) r.out.push_back(1);
  }
  if (r.out.empty()) c.fail("reducing every axis without keepdims gives a scalar, which is not supported");
  return r;
}

// A registry reduction over `axes`, keeping them as 1s.
std::string reduce_kept(OnnxContext& c, const std::string& op, const std::string& in, const std::vector<int64_t>& axes,
                        int64_t ord, const std::string& suffix) {
  Attrs a;
  a.set("axis", axes);
  a.set("keepdims", true);
  if (ord) a.set("ord", ord);
  return c.add_node(op, a, {in}, suffix);
}

void reduce(const char* onnx_op, const char* op, int64_t axes_input_since, int64_t ord = 0, bool square = false) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op)
      .converts([op = std::string(op), axes_input_since, ord, square](OnnxContext& c) {
        const ReduceAxes r = reduce_axes(c, axes_input_since);
        if (r.noop) return c.set_output(0, c.add_node("identity", {}, {c.input(0)}));
        std::string in = c.input(0);
        if (square) in = c.add_node("square", {}, {in}, "square");
        c.set_output(0, reshape(c, reduce_kept(c, op, in, r.axes, ord, "reduce"), r.out, "shape"));
      })
      .handles({"axes", "keepdims", "noop_with_empty_axes"}));
}

// ReduceLogSum: log(sum(x)); ReduceLogSumExp: m + log(sum(exp(x - m))), m the maximum (no overflow).
void reduce_log(const char* onnx_op, bool exp) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op)
      .converts([exp](OnnxContext& c) {
        const ReduceAxes r = reduce_axes(c, 18);
        std::string x = c.input(0), m;
        if (r.noop) {
          // Over no axis: log(x), and log(exp(x)) = x.
          return c.set_output(0, exp ? c.add_node("identity", {}, {x}) : c.add_node("log", {}, {x}));
        }
        if (exp) {
          m = reduce_kept(c, "max", x, r.axes, 0, "max");
          x = c.add_node("exp", {}, {c.add_node("broadcast_sub", {}, {x, m}, "shift")}, "exp");
        }
        std::string y = c.add_node("log", {}, {reduce_kept(c, "sum", x, r.axes, 0, "sum")}, "log");
        if (exp) y = c.add_node("broadcast_add", {}, {y, m}, "unshift");
        c.set_output(0, reshape(c, y, r.out, "shape"));
      })
      .handles({"axes", "keepdims", "noop_with_empty_axes"}));
}

const int reduce_regs = [] {
  reduce("ReduceMean", "mean", 18);
  reduce("ReduceSum", "sum", 13);
  reduce("ReduceMax", "max", 18);
  reduce("ReduceMin", "min", 18);
  reduce("ReduceProd", "prod", 18);
  reduce("ReduceL1", "norm", 18, 1);
  reduce("ReduceL2", "norm", 18, 2);
  reduce("ReduceSumSquare", "sum", 18, 0, true);
  reduce_log("ReduceLogSum", false);
  reduce_log("ReduceLogSumExp", true);
  return 0;
}();

void arg_reduce(const char* onnx_op, const char* op) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op)
      .converts([op = std::string(op)](OnnxContext& c) {
        const Shape x = c.shape(0);
        const int64_t axis = normalize_axis(c.attr_int("axis", 0), static_cast<int64_t>(x.size()), c.op_type() + " axis");
        const bool keep = c.attr_int("keepdims", 1) != 0;
        c.attr_int("select_last_index", 0);
        Attrs a;
        a.set("axis", axis);
        a.set("keepdims", true);
        const std::string y = c.add_node(op, a, {c.input(0)}, "arg");
        Shape out;
        for (std::size_t i = 0; i < x.size(); ++i)
          if (static_cast<int64_t>(i) != axis) out.push_back(x[i]);
          else if (keep) out.push_back(1);
        if (out.empty()) c.fail("the result would be a scalar, which is not supported");
        c.set_output(0, reshape(c, y, out, "shape"), DType::kInt64);
      })
      .handles({"axis", "keepdims", "select_last_index"})
      .checks([](OnnxCheck& k) {
        if (k.attr_int("select_last_index", 0) != 0) k.refuse("select_last_index", "only the first index is supported");
      }));
}

// Hardmax: 1 at the first largest value along the axis, else 0: argmax,
// then one_hot on a new last axis moved back into place. Before opset 13 the
// input is seen as 2-D, flattened at `axis`.
const OnnxConverterRegistrar hardmax_reg(OnnxConverter("Hardmax")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      const int64_t rank = static_cast<int64_t>(x.size());
      std::string in = c.input(0);
      Shape work = x;
      int64_t axis = 0;
      if (c.opset() < 13) {
        const int64_t at = normalize_axis(c.attr_int("axis", 1), std::max<int64_t>(rank, 1), "Hardmax axis");
        int64_t a = 1, b = 1;
        for (int64_t i = 0; i < rank; ++i) (i < at ? a : b) *= x[static_cast<std::size_t>(i)];
        work = {a, b};
        in = reshape(c, in, work, "flatten");
        axis = 1;
      } else {
        axis = normalize_axis(c.attr_int("axis", -1), rank, "Hardmax axis");
      }
      const int64_t wr = static_cast<int64_t>(work.size());
      Attrs am;
      am.set("axis", axis);
      am.set("keepdims", false);
      const std::string idx = c.add_node("argmax", am, {in}, "argmax");
      const std::string hot =
          c.add_node("one_hot", attrs_of("depth", work[static_cast<std::size_t>(axis)]), {idx}, "one_hot");
      std::string y = hot;
      if (axis != wr - 1) {
        // one_hot's axis is last: (..., axis removed, depth) -> move depth back to `axis`.
        std::vector<int64_t> perm;
        for (int64_t i = 0; i < wr - 1; ++i) {
          if (i == axis) perm.push_back(wr - 1);
          perm.push_back(i);
        }
        y = c.add_node("transpose", attrs_of("axes", perm), {hot}, "transpose");
      }
      c.set_output(0, reshape(c, y, x, "shape"));
    })
    .handles({"axis"}));

const int arg_regs = [] {
  arg_reduce("ArgMax", "argmax");
  arg_reduce("ArgMin", "argmin");
  return 0;
}();

}  // namespace
}  // namespace hybgen
