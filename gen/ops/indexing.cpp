// Shape and indexing ops, MXNet's matrix_op / indexing_op spellings:
//   strided gathers (templates/kernels/strided_copy.inc): tile, repeat,
//     reverse (flip), slice_like, space_to_depth, depth_to_space;
//   stack (each input a block of the output, as Concat's parts);
//   take, one_hot, SequenceMask (templates/kernels/index.inc), their
//     indices read from float tensors as MXNet does.
#include <algorithm>

#include "ir/error.h"
#include "ops/indexing.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

int64_t checked_size(int64_t a, int64_t b, const std::string& what) {
  int64_t r = 0;
  if (a < 0 || b < 0 || __builtin_mul_overflow(a, b, &r) || r > (int64_t{1} << 62))
    throw Error(what + ": the output would have more than 2^62 elements");
  return r;
}

void check_output_size(const Shape& out, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : out) n = checked_size(n, d, what);
  if (!checked_bytes(out, sizeof(float))) throw Error(what + ": the output is too large");
}

void simplify_view(StridedView& v) {
  Shape dims;
  std::vector<int64_t> strides;
  for (std::size_t d = 0; d < v.dims.size(); ++d) {
    if (v.dims[d] == 1) continue;
    if (!dims.empty() && strides.back() == v.strides[d] * v.dims[d]) {
      dims.back() *= v.dims[d];
      strides.back() = v.strides[d];
    } else {
      dims.push_back(v.dims[d]);
      strides.push_back(v.strides[d]);
    }
  }
  if (dims.empty()) {
    dims = {1};
    strides = {1};
  }
  v.dims = dims;
  v.strides = strides;
}

namespace {

constexpr std::size_t kMaxRank = 8;

void check_rank(const Shape& s) {
  if (s.size() > kMaxRank) throw Error("rank above 8 is not supported");
}

GatherView tile_view(const Attrs& a, const Shape& in) {
  std::vector<int64_t> reps = a.get_ints("reps");
  for (int64_t r : reps)
    if (r < 1) throw Error("tile: reps " + cpp_int_list(reps) + " must all be at least 1");
  Shape dims = in;
  while (dims.size() < reps.size()) dims.insert(dims.begin(), 1);
  while (reps.size() < dims.size()) reps.insert(reps.begin(), 1);
  const auto stride = row_major_strides(dims);
  GatherView g;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    g.view.dims.insert(g.view.dims.end(), {reps[i], dims[i]});
    g.view.strides.insert(g.view.strides.end(), {0, stride[i]});
    g.out.push_back(checked_size(reps[i], dims[i], "tile"));
  }
  return g;
}

GatherView repeat_view(const Attrs& a, const Shape& in) {
  const int64_t repeats = a.get_int("repeats");
  if (repeats < 1) throw Error("repeat: repeats " + std::to_string(repeats) + " must be at least 1");
  GatherView g;
  if (a.get_int("axis") == kSliceNone) {  // the flattened input
    g.view.dims = {num_elements(in), repeats};
    g.view.strides = {1, 0};
    g.out = {checked_size(num_elements(in), repeats, "repeat")};
    return g;
  }
  if (in.empty()) throw Error("repeat along an axis of a scalar");
  const int axis = normalize_axis(a.get_int("axis"), in.size());
  const auto stride = row_major_strides(in);
  for (std::size_t i = 0; i < in.size(); ++i) {
    g.view.dims.push_back(in[i]);
    g.view.strides.push_back(stride[i]);
    g.out.push_back(in[i]);
    if (static_cast<int>(i) == axis) {
      g.view.dims.push_back(repeats);
      g.view.strides.push_back(0);
      g.out.back() = checked_size(g.out.back(), repeats, "repeat");
    }
  }
  return g;
}

GatherView reverse_view(const Attrs& a, const Shape& in) {
  std::vector<int64_t> step(in.size(), 1), none(in.size(), kSliceNone);
  for (int64_t ax : a.get_ints("axis")) {
    const int axis = normalize_axis(ax, in.size());
    if (step[axis] == -1) throw Error("reverse: axis " + std::to_string(ax) + " is repeated");
    step[axis] = -1;
  }
  GatherView g;
  g.view = slice_view(in, none, none, step);
  g.out = g.view.dims;
  return g;
}

GatherView slice_like_view(const Attrs& a, const Shape& in, const Shape& like) {
  std::vector<int64_t> begin(in.size(), kSliceNone), end(in.size(), kSliceNone);
  std::vector<int64_t> axes = a.get_ints("axes");
  if (axes.empty()) {
    if (like.size() != in.size())
      throw Error("slice_like: shape_like " + shape_str(like) + " has another rank than data " + shape_str(in));
    for (std::size_t i = 0; i < in.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  for (int64_t ax : axes) {
    const int axis = normalize_axis(ax, in.size());
    if (axis >= static_cast<int>(like.size()))
      throw Error("slice_like: axis " + std::to_string(ax) + " is past shape_like " + shape_str(like));
    if (like[axis] > in[axis] || like[axis] < 1)
      throw Error("slice_like: shape_like " + shape_str(like) + " does not fit in data " + shape_str(in) + " on axis " +
                  std::to_string(axis));
    begin[axis] = 0;
    end[axis] = like[axis];
  }
  GatherView g;
  g.view = slice_view(in, begin, end, {});
  g.out = g.view.dims;
  return g;
}

// depth_to_space: (N, C, H, W) -> (N, C/b², H b, W b), the input's channels
// read as (b, b, C/b²) (MXNet's DCR order); space_to_depth the inverse.
GatherView depth_space_view(const Attrs& a, const Shape& in, bool to_space) {
  const int64_t b = a.get_int("block_size");
  if (in.size() != 4) throw Error("a 4-D (N, C, H, W) input is needed, got " + shape_str(in));
  if (b < 1 || (to_space ? b > in[1] : (b > in[2] || b > in[3])))
    throw Error("block_size " + std::to_string(b) + " does not fit " + shape_str(in));
  const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  GatherView g;
  if (to_space) {
    if (c % (b * b)) throw Error("depth_to_space: channels " + std::to_string(c) + " are no multiple of block_size²");
    const int64_t k = c / (b * b);
    // Output (N, k, H, b1, W, b2) from input (N, b1, b2, k, H, W).
    g.view.dims = {n, k, h, b, w, b};
    g.view.strides = {c * h * w, h * w, w, b * k * h * w, 1, k * h * w};
    g.out = {n, k, h * b, w * b};
  } else {
    if (h % b || w % b)
      throw Error("space_to_depth: height " + std::to_string(h) + " and width " + std::to_string(w) +
                  " must be multiples of block_size " + std::to_string(b));
    const int64_t ho = h / b, wo = w / b;
    // Output (N, b1, b2, C, H/b, W/b) from input (N, C, H/b, b1, W/b, b2).
    g.view.dims = {n, b, b, c, ho, wo};
    g.view.strides = {c * h * w, w, 1, h * w, b * w, b};
    g.out = {n, c * b * b, ho, wo};
  }
  return g;
}

}  // namespace

GatherView gather_view(const std::string& op, const Attrs& a, const std::vector<Shape>& in) {
  GatherView g;
  if (op == "tile") g = tile_view(a, in[0]);
  else if (op == "repeat") g = repeat_view(a, in[0]);
  else if (op == "reverse") g = reverse_view(a, in[0]);
  else if (op == "slice_like") g = slice_like_view(a, in[0], in.at(1));
  else if (op == "depth_to_space") g = depth_space_view(a, in[0], true);
  else if (op == "space_to_depth") g = depth_space_view(a, in[0], false);
  else throw Error("'" + op + "' is no gather");
  check_rank(in[0]);
  check_rank(g.out);
  check_output_size(g.out, op);
  if (num_elements(g.out) == 0) throw Error(op + " of an empty tensor");
  StridedView simple = g.view;
  simplify_view(simple);
  if (simple.dims.size() > kMaxRank) throw Error(op + ": the gather has more than 8 separate axes");
  return g;
}

namespace {

std::vector<Shape> shapes(const std::vector<TensorType>& in) {
  std::vector<Shape> s;
  for (const auto& t : in) s.push_back(t.shape);
  return s;
}

OpDef gather_op(const std::string& name, const std::string& summary) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.input_names = {"data"};
  d.fusion = FusionClass::kInjective;
  d.infer = [name](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{TensorType{gather_view(name, a, shapes(in)).out, in[0].dtype}};
  };
  d.reference = [name](const KernelIO& io) {
    const StridedView v = gather_view(name, io.attrs, shapes(io.in_types)).view;
    for_each_strided(v.dims, v.strides, {}, [&](int64_t i, int64_t src, int64_t) {
      io.output<float>(0)[i] = io.input<float>(0)[v.offset + src];
    });
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[name](const EmitContext& ctx) {
                    StridedView v = gather_view(name, ctx.node.attrs, shapes(ctx.in_types)).view;
                    simplify_view(v);
                    return KernelCall{{"strided_copy"},
                                      "{\n  static const long dims[] = " + cpp_int_list(v.dims) +
                                          ";\n  static const long strides[] = " + cpp_int_list(v.strides) +
                                          ";\n  hg_strided_copy(" + ctx.in[0] + " + " + std::to_string(v.offset) +
                                          ", " + ctx.out[0] + ", " + std::to_string(v.dims.size()) +
                                          ", dims, strides);\n}"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  return d;
}

Attrs ints_attr(const std::string& key, std::vector<int64_t> v) {
  Attrs a;
  a.set(key, std::move(v));
  return a;
}
Attrs int_attr(const std::string& key, int64_t v) {
  Attrs a;
  a.set(key, v);
  return a;
}

const OpRegistrar tile_op([] {
  OpDef d = gather_op("tile", "repeat the whole tensor along each axis");
  d.attrs = {{"reps", AttrKind::kInts, std::nullopt, "repetitions per axis (right-aligned with the shape)", {}}};
  // Repeating axis 0 interleaves the items' copies: x0 x1 x0 x1, not x0 x0 x1 x1.
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    const std::vector<int64_t>& reps = a.get_ints("reps");
    return reps.size() >= in[0].shape.size() && reps[reps.size() - in[0].shape.size()] != 1;
  };
  d.examples = {{ints_attr("reps", {2, 3}), {{2, 3}}},
                {ints_attr("reps", {2, 1, 2}), {{3, 5}}},
                {ints_attr("reps", {3}), {{2, 1, 4}}}};
  return d;
}());

const OpRegistrar repeat_op([] {
  OpDef d = gather_op("repeat", "repeat each element along an axis");
  d.attrs = {{"repeats", AttrKind::kInt, std::nullopt, "copies of each element", {}},
             {"axis", AttrKind::kInt, kSliceNone, "the axis; None: the flattened input", {}}};
  Attrs all = int_attr("repeats", 2), axis1 = int_attr("repeats", 3), last = int_attr("repeats", 2);
  axis1.set("axis", int64_t{1});
  last.set("axis", int64_t{-1});
  d.examples = {{all, {{2, 3}}}, {axis1, {{2, 3, 2}}}, {last, {{3, 5}}}};
  return d;
}());

const OpRegistrar reverse_op([] {
  OpDef d = gather_op("reverse", "reverse the order of elements along axes");
  d.aliases = {"flip"};
  d.attrs = {{"axis", AttrKind::kInts, std::nullopt, "the axes to reverse", {}}};
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    for (int64_t axis : a.get_ints("axis"))
      if (is_first_axis(axis, in[0].shape.size())) return true;
    return false;
  };
  d.examples = {{ints_attr("axis", {1}), {{2, 5}}}, {ints_attr("axis", {0, 2}), {{3, 2, 4}}}, {ints_attr("axis", {-1}), {{7}}}};
  return d;
}());

const OpRegistrar slice_like_op([] {
  OpDef d = gather_op("slice_like", "data sliced from 0 to the shape of a second input on some axes");
  d.input_names = {"data", "shape_like"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"axes", AttrKind::kInts, std::vector<int64_t>{}, "the axes to slice; empty: all", {}}};
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    const std::vector<int64_t>& axes = a.get_ints("axes");
    return axes.empty() ||
           std::any_of(axes.begin(), axes.end(), [&](int64_t x) { return is_first_axis(x, in[0].shape.size()); });
  };
  d.examples = {{Attrs{}, {{4, 5}, {2, 3}}}, {ints_attr("axes", {2, -1}), {{2, 3, 5, 4}, {1, 1, 3, 3}}}};
  return d;
}());

const OpRegistrar depth_to_space_op([] {
  OpDef d = gather_op("depth_to_space", "channels moved into blocks of space (N, C, H, W) -> (N, C/b², H b, W b)");
  d.attrs = {{"block_size", AttrKind::kInt, std::nullopt, "the block's side", {}}};
  d.examples = {{int_attr("block_size", 2), {{1, 8, 3, 2}}}, {int_attr("block_size", 3), {{2, 9, 1, 2}}}};
  return d;
}());

const OpRegistrar space_to_depth_op([] {
  OpDef d = gather_op("space_to_depth", "blocks of space moved into channels (N, C, H, W) -> (N, C b², H/b, W/b)");
  d.attrs = {{"block_size", AttrKind::kInt, std::nullopt, "the block's side", {}}};
  d.examples = {{int_attr("block_size", 2), {{1, 2, 4, 6}}}, {int_attr("block_size", 3), {{2, 1, 3, 3}}}};
  return d;
}());

// ---- stack -----------------------------------------------------------------

const OpRegistrar stack_op([] {
  OpDef d;
  d.name = "stack";
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    return is_first_axis(a.get_int("axis"), in[0].shape.size() + 1);
  };
  d.summary = "join same-shape inputs along a new axis";
  d.input_names = {"data0", "data1", "..."};
  d.min_inputs = 1;
  d.max_inputs = -1;
  d.attrs = {{"axis", AttrKind::kInt, int64_t{0}, "the new axis's position", {}},
             {"num_args", AttrKind::kInt, std::nullopt, "number of inputs", {}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (a.get_int("num_args") != static_cast<int64_t>(in.size()))
      throw Error("num_args is " + std::to_string(a.get_int("num_args")) + " but the node has " +
                  std::to_string(in.size()) + " inputs");
    for (std::size_t i = 1; i < in.size(); ++i)
      if (in[i].shape != in[0].shape)
        throw Error("stack: input " + std::to_string(i) + " has shape " + shape_str(in[i].shape) + ", input 0 " +
                    shape_str(in[0].shape));
    Shape out = in[0].shape;
    const int axis = normalize_axis(a.get_int("axis"), out.size() + 1);
    out.insert(out.begin() + axis, static_cast<int64_t>(in.size()));
    check_rank(out);
    check_output_size(out, "stack");
    return std::vector<TensorType>{TensorType{out, in[0].dtype}};
  };
  // Input i is rows of `part` floats, at i * part in rows of n * part.
  d.reference = [](const KernelIO& io) {
    const Shape& s = io.in_types[0].shape;
    const int axis = normalize_axis(io.attrs.get_int("axis"), s.size() + 1);
    const int64_t outer = dims_product(s, 0, axis), part = dims_product(s, axis, s.size());
    const int64_t n = static_cast<int64_t>(io.in.size());
    for (int64_t i = 0; i < n; ++i)
      for (int64_t o = 0; o < outer; ++o)
        std::copy(io.input<float>(i) + o * part, io.input<float>(i) + (o + 1) * part,
                  io.output<float>(0) + (o * n + i) * part);
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const Shape& s = ctx.in_types[0].shape;
                    const int axis = normalize_axis(ctx.node.attrs.get_int("axis"), s.size() + 1);
                    const int64_t outer = dims_product(s, 0, axis), part = dims_product(s, axis, s.size());
                    const int64_t n = static_cast<int64_t>(ctx.in.size());
                    std::string code;
                    for (int64_t i = 0; i < n; ++i)
                      code += (i ? "\n" : "") + std::string("hg_concat_part(") + ctx.in[i] + ", " + ctx.out[0] + " + " +
                              std::to_string(i * part) + ", " + std::to_string(outer) + ", " + std::to_string(part) +
                              ", " + std::to_string(n * part) + ");";
                    return KernelCall{{"concat"}, code};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs first = int_attr("num_args", 3), middle = int_attr("num_args", 2), last = int_attr("num_args", 2);
  middle.set("axis", int64_t{1});
  last.set("axis", int64_t{-1});
  d.examples = {{first, {{2, 3}, {2, 3}, {2, 3}}}, {middle, {{2, 3, 4}, {2, 3, 4}}}, {last, {{3, 5}, {3, 5}}},
                {int_attr("num_args", 1), {{4}}}};
  return d;
}());

// ---- take ------------------------------------------------------------------

const OpRegistrar take_op([] {
  OpDef d;
  d.name = "take";
  // Taking along axis 0 of a batch of items (not of a table of weights) reads across items.
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>& in_batch) {
    return in_batch[0] && is_first_axis(a.get_int("axis"), in[0].shape.size());
  };
  d.summary = "slices along an axis at indices from a float tensor";
  d.input_names = {"a", "indices"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"axis", AttrKind::kInt, int64_t{0}, "the axis to take along", {}},
             {"mode", AttrKind::kString, std::string("clip"),
              "out-of-range indices: clipped or wrapped (raise: clipped, generated code does not stop)",
              {"clip", "wrap", "raise"}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape& s = in[0].shape;
    if (s.empty() || num_elements(s) == 0) throw Error("take needs a non-empty tensor with an axis, got " + shape_str(s));
    const int axis = normalize_axis(a.get_int("axis"), s.size());
    Shape out(s.begin(), s.begin() + axis);
    out.insert(out.end(), in[1].shape.begin(), in[1].shape.end());
    out.insert(out.end(), s.begin() + axis + 1, s.end());
    check_rank(out);
    check_output_size(out, "take");
    return std::vector<TensorType>{TensorType{out, in[0].dtype}};
  };
  d.reference = [](const KernelIO& io) {
    const AxisSplit g = split_at_axis(io.in_types[0].shape, io.attrs.get_int("axis"));
    const int64_t count = io.in_types[1].num_elements();
    const bool wrap = io.attrs.get_string("mode") == "wrap";
    // Indices of any value type, data of any dtype (moved, not computed).
    std::vector<float> indices(static_cast<std::size_t>(count));
    with_value_type(io.in_types[1].dtype, [&](auto value) {
      using I = decltype(value);
      for (int64_t i = 0; i < count; ++i) indices[i] = static_cast<float>(io.input<I>(1)[i]);
    });
    with_element_bits(io.in_types[0].dtype, [&](auto element) {
      using T = decltype(element);
      for (int64_t o = 0; o < g.outer; ++o)
        for (int64_t i = 0; i < count; ++i) {
          const T* src = io.input<T>(0) + (o * g.n + bound_index(indices[i], g.n, wrap)) * g.inner;
          std::copy(src, src + g.inner, io.output<T>(0) + (o * count + i) * g.inner);
        }
    });
  };
  d.reference_dtypes = all_dtypes();
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const AxisSplit g = split_at_axis(ctx.in_types[0].shape, ctx.node.attrs.get_int("axis"));
                    return KernelCall{{"index"},
                                      "hg_take(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] + ", " +
                                          std::to_string(g.outer) + ", " + std::to_string(g.n) + ", " +
                                          std::to_string(g.inner) + ", " +
                                          std::to_string(ctx.in_types[1].num_elements()) + ", " +
                                          (ctx.node.attrs.get_string("mode") == "wrap" ? "true" : "false") + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs rows, wrap_last;
  wrap_last.set("axis", int64_t{-1});
  wrap_last.set("mode", std::string("wrap"));
  d.examples = {{rows, {{5, 3}, {4}}}, {wrap_last, {{2, 3, 4}, {2, 3}}}, {int_attr("axis", 1), {{2, 3, 2}, {5}}}};
  return d;
}());

// ---- one_hot ---------------------------------------------------------------

const OpRegistrar one_hot_op([] {
  OpDef d;
  d.name = "one_hot";
  d.summary = "on_value at each index of a new last axis of `depth`, else off_value";
  d.input_names = {"indices"};
  d.attrs = {{"depth", AttrKind::kInt, std::nullopt, "size of the new axis", {}},
             {"on_value", AttrKind::kFloat, 1.0, "the value at the index", {}},
             {"off_value", AttrKind::kFloat, 0.0, "the value elsewhere", {}},
             {"dtype", AttrKind::kString, std::string("float32"), "the output's type (values stored as float32)",
              {"float16", "float32", "float64", "uint8", "int8", "int32", "int64"}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (a.get_int("depth") < 1) throw Error("one_hot: depth " + std::to_string(a.get_int("depth")) + " must be at least 1");
    Shape out = in[0].shape;
    out.push_back(a.get_int("depth"));
    check_rank(out);
    check_output_size(out, "one_hot");
    return std::vector<TensorType>{TensorType{out, in[0].dtype}};
  };
  d.reference = [](const KernelIO& io) {
    const int64_t depth = io.attrs.get_int("depth"), count = io.in_types[0].num_elements();
    const float on = static_cast<float>(io.attrs.get_float("on_value"));
    const float off = static_cast<float>(io.attrs.get_float("off_value"));
    for (int64_t i = 0; i < count; ++i) {
      const int64_t j = truncate_index(io.input<float>(0)[i]);
      for (int64_t k = 0; k < depth; ++k) io.output<float>(0)[i * depth + k] = k == j ? on : off;
    }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    const Attrs& a = ctx.node.attrs;
                    return KernelCall{{"index"},
                                      "hg_one_hot(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                                          std::to_string(ctx.in_types[0].num_elements()) + ", " +
                                          std::to_string(a.get_int("depth")) + ", " +
                                          cpp_float(a.get_float("on_value")) + ", " +
                                          cpp_float(a.get_float("off_value")) + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs values = int_attr("depth", 3);
  values.set("on_value", 2.5);
  values.set("off_value", -1.0);
  d.examples = {{int_attr("depth", 4), {{2, 3}}}, {values, {{5}}}, {int_attr("depth", 1), {{3}}}};
  return d;
}());

// ---- SequenceMask ----------------------------------------------------------

struct SequenceGeometry {
  int64_t steps, batch, inner;
  bool time_major;
};

SequenceGeometry sequence_geometry(const Attrs& a, const Shape& s) {
  const int64_t axis = a.get_int("axis");
  if (axis != 0 && axis != 1) throw Error("SequenceMask: axis " + std::to_string(axis) + " must be 0 or 1");
  if (s.size() < 2) throw Error("SequenceMask needs (steps, batch, ...) or (batch, steps, ...) data, got " + shape_str(s));
  return {s[axis], s[1 - axis], dims_product(s, 2, s.size()), axis == 0};
}

const OpRegistrar sequence_mask_op([] {
  OpDef d;
  d.name = "SequenceMask";
  // Steps along axis 0: each is masked by its index there.
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>&, const std::vector<bool>&) {
    return a.get_bool("use_sequence_length") && a.get_int("axis") == 0;
  };
  d.summary = "positions past each sequence's length set to a value";
  d.input_names = {"data", "sequence_length"};
  d.min_inputs = 1;
  d.max_inputs = 2;
  d.attrs = {{"use_sequence_length", AttrKind::kBool, false, "mask by the lengths; false: pass data through", {}},
             {"value", AttrKind::kFloat, 0.0, "the masked positions' value", {}},
             {"axis", AttrKind::kInt, int64_t{0}, "the steps' axis (0 or 1; the batch is the other)", {}}};
  d.arity = [](const Attrs& a) { return a.get_bool("use_sequence_length") ? 2 : 1; };
  d.is_identity = [](const Attrs& a) { return !a.get_bool("use_sequence_length"); };
  d.fusion = FusionClass::kOpaque;
  d.input_ranges = {positive_input(1)};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const SequenceGeometry g = sequence_geometry(a, in[0].shape);
    if (in.size() > 1 && in[1].shape != Shape{g.batch})
      throw Error("SequenceMask: sequence_length has shape " + shape_str(in[1].shape) + ", expected (" +
                  std::to_string(g.batch) + ",)");
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    const int64_t n = io.in_types[0].num_elements();
    if (io.in.size() < 2) {
      std::copy(io.input<float>(0), io.input<float>(0) + n, io.output<float>(0));
      return;
    }
    const SequenceGeometry g = sequence_geometry(io.attrs, io.in_types[0].shape);
    const float value = static_cast<float>(io.attrs.get_float("value"));
    for (int64_t t = 0; t < g.steps; ++t)
      for (int64_t b = 0; b < g.batch; ++b) {
        const int64_t base = (g.time_major ? t * g.batch + b : b * g.steps + t) * g.inner;
        const bool keep = t < truncate_index(io.input<float>(1)[b]);
        for (int64_t r = 0; r < g.inner; ++r)
          io.output<float>(0)[base + r] = keep ? io.input<float>(0)[base + r] : value;
      }
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    if (ctx.in.size() < 2)
                      return KernelCall{{"copy"},
                                        "hg_copy(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                                            std::to_string(ctx.out_types[0].num_elements()) + ");"};
                    const SequenceGeometry g = sequence_geometry(ctx.node.attrs, ctx.in_types[0].shape);
                    return KernelCall{{"index"},
                                      "hg_sequence_mask(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] + ", " +
                                          std::to_string(g.steps) + ", " + std::to_string(g.batch) + ", " +
                                          std::to_string(g.inner) + ", " + (g.time_major ? "true" : "false") + ", " +
                                          cpp_float(ctx.node.attrs.get_float("value")) + ");"};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs time_major, batch_major;
  time_major.set("use_sequence_length", true);
  batch_major.set("use_sequence_length", true);
  batch_major.set("axis", int64_t{1});
  batch_major.set("value", -3.5);
  d.examples = {{time_major, {{3, 2, 4}, {2}}}, {batch_major, {{2, 5}, {2}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
