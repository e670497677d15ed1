// Ops that broadcast or select without arithmetic of their own: where,
// add_n (ElementWiseSum), ones_like / zeros_like, broadcast_to,
// broadcast_axis and broadcast_like. Each is an elementwise expression over
// its output (OpDef::emit_scalar, the smaller inputs read through broadcast
// strides), so they fuse with their neighbours and need no kernel of their
// own on either backend. An input whose values an op ignores (the shape
// source of broadcast_like, the data of ones_like) is read as one element and
// discarded, so the fused loop does not stream it.
#include <algorithm>
#include <cstdint>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

std::vector<TensorType> one_output(const Shape& shape, const TensorType& like) {
  return {TensorType{shape, like.dtype}};
}

// Copies input 0 to the output through broadcast strides (its shape
// right-aligned to the output's): the reference of the broadcast_* ops.
void broadcast_copy(const KernelIO& io) {
  const Shape& out = io.out_types[0].shape;
  const auto strides = broadcast_strides(io.in_types[0].shape, out);
  with_element_bits(io.in_types[0].dtype, [&](auto element) {
    using T = decltype(element);
    const T* x = io.input<T>(0);
    T* y = io.output<T>(0);
    for_each_strided(out, strides, {}, [&](int64_t i, int64_t a, int64_t) { y[i] = x[a]; });
  });
}

// The shape of one element at the output's rank: how an input whose values
// are not used is read (its first element, never advanced).
Shape one_element(const Shape& output) { return Shape(output.size(), 1); }

// An expression that reads `unused` (so the loop's load of it is not an
// unused variable under -Werror) and gives `value`.
std::string discarding(const std::string& unused, const std::string& value) {
  return "(static_cast<void>(" + unused + "), " + value + ")";
}

double no_flops(const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; }

Attrs ints(const char* name, std::vector<int64_t> values) {
  Attrs a;
  a.set(name, std::move(values));
  return a;
}

// where(condition, x, y): x where condition is non-zero, else y. x and y
// have one shape; condition has it too, or is 1-D with one value per row
// of x's first axis (MXNet's where).
const OpRegistrar where([] {
  OpDef d;
  d.name = "where";
  d.summary = "x where condition != 0, else y";
  d.input_names = {"condition", "x", "y"};
  d.min_inputs = d.max_inputs = 3;
  d.fusion = FusionClass::kBroadcast;
  d.inplace = true;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) {
    const Shape &c = in[0].shape, &x = in[1].shape;
    if (x != in[2].shape)
      throw Error("x has shape " + shape_str(x) + " but y has shape " + shape_str(in[2].shape) +
                  " (where needs them equal)");
    if (c != x && !(c.size() == 1 && !x.empty() && c[0] == x[0]))
      throw Error("condition has shape " + shape_str(c) + "; where needs x's shape " + shape_str(x) +
                  " or one value per row (" + (x.empty() ? std::string("x has no rows") : "(" + std::to_string(x[0]) + ",)") +
                  ")");
    if (in[1].dtype != in[2].dtype)
      throw Error("x is " + dtype_name(in[1].dtype) + " but y is " + dtype_name(in[2].dtype));
    return one_output(x, in[1]);
  };
  d.scalar_input_shape = [](const Attrs&, int index, const Shape& input, const Shape& output) {
    if (index != 0 || input.size() == output.size()) return input;
    Shape rows = one_element(output);  // (N,) as (N, 1, ..., 1)
    rows[0] = input[0];
    return rows;
  };
  d.reference = [](const KernelIO& io) {
    const int64_t n = io.out_types[0].num_elements();
    const int64_t conditions = io.in_types[0].num_elements();
    const int64_t per_condition = conditions == 0 ? 0 : n / conditions;  // 1 when the shapes match
    std::vector<bool> take_x(static_cast<std::size_t>(conditions));
    with_value_type(io.in_types[0].dtype, [&](auto value) {
      using C = decltype(value);
      for (int64_t i = 0; i < conditions; ++i) take_x[i] = io.input<C>(0)[i] != C{};
    });
    with_element_bits(io.in_types[1].dtype, [&](auto element) {
      using T = decltype(element);
      for (int64_t i = 0; i < n; ++i) io.output<T>(0)[i] = take_x[i / per_condition] ? io.input<T>(1)[i] : io.input<T>(2)[i];
    });
  };
  d.reference_dtypes = float32_and_integer_dtypes();
  d.emit_scalar = [](const ScalarSite& s) { return s.in[0] + " != 0.0f ? " + s.in[1] + " : " + s.in[2]; };
  d.flops = no_flops;
  d.examples = {{Attrs{}, {{3, 4}, {3, 4}, {3, 4}}},
                {Attrs{}, {{5}, {5, 3}, {5, 3}}},
                {Attrs{}, {{2}, {2, 3, 4}, {2, 3, 4}}},
                {Attrs{}, {{1}, {1}, {1}}},
                {Attrs{}, {{7}, {7}, {7}}}};
  return d;
}());

// add_n(a, b, ...): the sum of any number of same-shape inputs, added left
// to right (MXNet's ElementWiseSum order).
const OpRegistrar add_n([] {
  OpDef d;
  d.name = "add_n";
  d.aliases = {"ElementWiseSum"};
  d.summary = "sum of same-shape inputs";
  d.input_names = {"args"};
  d.min_inputs = 1;
  d.max_inputs = -1;
  d.attrs = {{"num_args", AttrKind::kInt, int64_t{0}, "number of inputs (MXNet bookkeeping; 0: any)", {}}};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const int64_t num_args = a.get_int("num_args");
    if (num_args != 0 && num_args != static_cast<int64_t>(in.size()))
      throw Error("num_args is " + std::to_string(num_args) + " but the node has " + std::to_string(in.size()) +
                  " inputs");
    for (std::size_t i = 1; i < in.size(); ++i)
      if (in[i].shape != in[0].shape)
        throw Error("input " + std::to_string(i) + " has shape " + shape_str(in[i].shape) + ", input 0 " +
                    shape_str(in[0].shape) + " (add_n needs them equal)");
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) {
      float sum = io.input<float>(0)[i];
      for (std::size_t k = 1; k < io.in.size(); ++k) sum += io.input<float>(k)[i];
      io.output<float>(0)[i] = sum;
    }
  };
  d.emit_scalar = [](const ScalarSite& s) {
    std::string sum = s.in[0];
    for (std::size_t k = 1; k < s.in.size(); ++k) sum = (k == 1 ? sum : "(" + sum + ")") + " + " + s.in[k];
    return sum;
  };
  d.flops = [](const Attrs&, const std::vector<TensorType>& in, const std::vector<TensorType>& out) {
    return static_cast<double>(in.size() - 1) * static_cast<double>(out[0].num_elements());
  };
  Attrs three;
  three.set("num_args", int64_t{3});
  d.examples = {{Attrs{}, {{2, 5}, {2, 5}}},
                {three, {{3, 7}, {3, 7}, {3, 7}}},
                {Attrs{}, {{9}}},
                {Attrs{}, {{1}, {1}, {1}, {1}, {1}}},
                {Attrs{}, {{4, 3, 2}, {4, 3, 2}, {4, 3, 2}, {4, 3, 2}, {4, 3, 2}, {4, 3, 2}}}};
  return d;
}());

// ones_like / zeros_like: a constant of the input's shape.
OpDef constant_like(const char* name, const char* value, float fill) {
  OpDef d;
  d.name = name;
  d.summary = std::string("a tensor of ") + value + " shaped like the input";
  d.input_names = {"data"};
  d.fusion = FusionClass::kBroadcast;
  d.inplace = true;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  d.reference = [fill](const KernelIO& io) {
    std::fill(io.output<float>(0), io.output<float>(0) + io.out_types[0].num_elements(), fill);
  };
  d.scalar_input_shape = [](const Attrs&, int, const Shape&, const Shape& output) { return one_element(output); };
  const std::string literal = value;
  d.emit_scalar = [literal](const ScalarSite& s) { return discarding(s.in[0], literal); };
  d.flops = no_flops;
  d.examples = {{Attrs{}, {{3, 4}}}, {Attrs{}, {{1}}}, {Attrs{}, {{2, 3, 5}}}};
  return d;
}
const OpRegistrar ones_like(constant_like("ones_like", "1.0f", 1.0f));
const OpRegistrar zeros_like(constant_like("zeros_like", "0.0f", 0.0f));

// The common part of broadcast_to / broadcast_axis / broadcast_like: input
// 0 copied to a larger output of the same rank along its size-1 axes.
OpDef broadcast_op(const char* name, const char* summary) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.input_names = {"data"};
  d.fusion = FusionClass::kBroadcast;
  d.inplace = true;
  d.reference = broadcast_copy;
  d.reference_dtypes = all_dtypes();
  d.emit_scalar = [](const ScalarSite& s) { return s.in[0]; };
  d.flops = no_flops;
  return d;
}

// Checks that `from` broadcasts to `to` axis by axis (same rank, each axis
// equal or 1), naming the op's problem otherwise.
void check_broadcastable(const Shape& from, const Shape& to) {
  for (std::size_t i = 0; i < to.size(); ++i) {
    if (to[i] < 1) throw Error("cannot broadcast to size " + std::to_string(to[i]) + " on axis " + std::to_string(i));
    if (from[i] != to[i] && from[i] != 1)
      throw Error("cannot broadcast " + shape_str(from) + " to " + shape_str(to) + ": axis " + std::to_string(i) +
                  " has size " + std::to_string(from[i]) + ", neither 1 nor " + std::to_string(to[i]));
  }
}

// broadcast_to(shape): the output shape, 0 keeping the input's size on that axis.
const OpRegistrar broadcast_to([] {
  OpDef d = broadcast_op("broadcast_to", "broadcast to a shape (0: keep the axis)");
  d.attrs = {{"shape", AttrKind::kInts, std::vector<int64_t>{}, "the output shape; 0 keeps the input's size", {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape& s = in[0].shape;
    Shape out = a.get_ints("shape");
    if (out.size() != s.size())
      throw Error("shape " + shape_str(out) + " has " + std::to_string(out.size()) + " axes but the input " +
                  shape_str(s) + " has " + std::to_string(s.size()) + " (broadcast_to keeps the rank)");
    for (std::size_t i = 0; i < out.size(); ++i)
      if (out[i] == 0) out[i] = s[i];
    check_broadcastable(s, out);
    return one_output(out, in[0]);
  };
  d.examples = {{ints("shape", {3, 4}), {{1, 4}}},
                {ints("shape", {2, 0, 5}), {{1, 3, 1}}},
                {ints("shape", {6}), {{1}}},
                {ints("shape", {0, 0}), {{2, 3}}},
                {ints("shape", {4, 1, 3}), {{4, 1, 1}}}};
  return d;
}());

// broadcast_axis(axis, size): size-1 axes grown to the sizes given.
const OpRegistrar broadcast_axis([] {
  OpDef d = broadcast_op("broadcast_axis", "broadcast size-1 axes to the sizes given");
  d.aliases = {"broadcast_axes"};
  d.attrs = {{"axis", AttrKind::kInts, std::vector<int64_t>{}, "the axes to broadcast", {}},
             {"size", AttrKind::kInts, std::vector<int64_t>{}, "their sizes", {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const auto& axes = a.get_ints("axis");
    const auto& sizes = a.get_ints("size");
    if (axes.size() != sizes.size())
      throw Error(std::to_string(axes.size()) + " axes but " + std::to_string(sizes.size()) +
                  " sizes (broadcast_axis needs one size per axis)");
    Shape out = in[0].shape;
    for (std::size_t i = 0; i < axes.size(); ++i) {
      const int axis = normalize_axis(axes[i], out.size());
      if (out[axis] != 1)
        throw Error("axis " + std::to_string(axes[i]) + " has size " + std::to_string(out[axis]) +
                    " (broadcast_axis grows only size-1 axes, each once)");
      if (sizes[i] < 1) throw Error("size " + std::to_string(sizes[i]) + " for axis " + std::to_string(axes[i]));
      out[axis] = sizes[i];
    }
    return one_output(out, in[0]);
  };
  Attrs two;
  two.set("axis", std::vector<int64_t>{0, 2});
  two.set("size", std::vector<int64_t>{3, 4});
  Attrs last;
  last.set("axis", std::vector<int64_t>{-1});
  last.set("size", std::vector<int64_t>{5});
  d.examples = {{two, {{1, 2, 1}}}, {last, {{3, 1}}}, {Attrs{}, {{2, 2}}}};
  return d;
}());

// broadcast_like(lhs, rhs, lhs_axes, rhs_axes): lhs broadcast to rhs's
// shape, or only its lhs_axes to the sizes of rhs's rhs_axes. rhs gives its
// shape alone.
const OpRegistrar broadcast_like([] {
  OpDef d = broadcast_op("broadcast_like", "broadcast lhs to the shape of rhs (or some of its axes)");
  d.input_names = {"lhs", "rhs"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"lhs_axes", AttrKind::kInts, std::vector<int64_t>{}, "axes of lhs to broadcast; empty: all", {}},
             {"rhs_axes", AttrKind::kInts, std::vector<int64_t>{}, "the axes of rhs they take their sizes from", {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape &lhs = in[0].shape, &rhs = in[1].shape;
    const auto& lhs_axes = a.get_ints("lhs_axes");
    const auto& rhs_axes = a.get_ints("rhs_axes");
    if (lhs_axes.empty() || rhs_axes.empty()) {  // MXNet: unless both are given, the whole shape
      if (lhs.size() != rhs.size())
        throw Error("cannot broadcast " + shape_str(lhs) + " like " + shape_str(rhs) + ": the ranks differ");
      check_broadcastable(lhs, rhs);
      return one_output(rhs, in[0]);
    }
    if (lhs_axes.size() != rhs_axes.size())
      throw Error(std::to_string(lhs_axes.size()) + " lhs_axes but " + std::to_string(rhs_axes.size()) +
                  " rhs_axes (broadcast_like pairs them)");
    Shape out = lhs;
    for (std::size_t i = 0; i < lhs_axes.size(); ++i) {
      const int from = normalize_axis(lhs_axes[i], lhs.size());
      const int to = normalize_axis(rhs_axes[i], rhs.size());
      if (out[from] != 1)
        throw Error("lhs axis " + std::to_string(lhs_axes[i]) + " has size " + std::to_string(out[from]) +
                    " (broadcast_like grows only size-1 axes, each once)");
      out[from] = rhs[to];
    }
    // The loop reads one element of rhs (for its shape alone): it must have one.
    if (num_elements(rhs) == 0 && num_elements(out) != 0)
      throw Error("rhs " + shape_str(rhs) + " has no elements to take sizes from");
    return one_output(out, in[0]);
  };
  d.scalar_input_shape = [](const Attrs&, int index, const Shape& input, const Shape& output) {
    return index == 0 ? input : one_element(output);
  };
  d.emit_scalar = [](const ScalarSite& s) { return discarding(s.in[1], s.in[0]); };
  Attrs axes;
  axes.set("lhs_axes", std::vector<int64_t>{0, -1});
  axes.set("rhs_axes", std::vector<int64_t>{2, 0});
  d.examples = {{Attrs{}, {{1, 4}, {3, 4}}},
                {Attrs{}, {{2, 1, 1}, {2, 3, 5}}},
                {axes, {{1, 3, 1}, {6, 7, 2}}},
                {Attrs{}, {{1}, {1}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
