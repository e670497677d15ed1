// Slicing: slice (begin/end/step per axis, MXNet's None as kSliceNone),
// slice_axis (one axis), and SliceChannel / split (equal parts along an axis,
// several outputs). All are strided copies (templates/kernels/strided_copy.inc).
#include "ops/slice.h"

#include <algorithm>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {

std::vector<int64_t> row_major_strides(const Shape& s) {
  std::vector<int64_t> st(s.size(), 1);
  for (int i = static_cast<int>(s.size()) - 2; i >= 0; --i) st[i] = st[i + 1] * s[i + 1];
  return st;
}

StridedView slice_view(const Shape& in, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                       const std::vector<int64_t>& step) {
  if (begin.size() != end.size() || begin.size() > in.size() || (!step.empty() && step.size() != begin.size()))
    throw Error("begin " + cpp_int_list(begin) + ", end " + cpp_int_list(end) + " and step " + cpp_int_list(step) +
                " do not fit the input " + shape_str(in));
  const auto stride = row_major_strides(in);
  StridedView v;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const int64_t dim = in[i];
    int64_t s = i < step.size() && step[i] != kSliceNone ? step[i] : 1;
    if (s == 0) throw Error("step 0 on axis " + std::to_string(i));
    int64_t b = s > 0 ? 0 : dim - 1, e = s > 0 ? dim : -1;
    if (i < begin.size() && begin[i] != kSliceNone) {
      b = begin[i] < 0 ? begin[i] + dim : begin[i];
      b = s > 0 ? std::clamp<int64_t>(b, 0, dim) : std::clamp<int64_t>(b, -1, dim - 1);
    }
    if (i < end.size() && end[i] != kSliceNone) {
      e = end[i] < 0 ? end[i] + dim : end[i];
      e = s > 0 ? std::clamp<int64_t>(e, 0, dim) : std::clamp<int64_t>(e, -1, dim - 1);
    }
    const int64_t n = s > 0 ? std::max<int64_t>(0, (e - b + s - 1) / s) : std::max<int64_t>(0, (b - e - s - 1) / -s);
    if (n == 0) throw Error("axis " + std::to_string(i) + " slices to nothing");
    v.offset += b * stride[i];
    v.dims.push_back(n);
    v.strides.push_back(s * stride[i]);
  }
  return v;
}

namespace {

template <class T>
void gather(const StridedView& v, const T* x, T* y) {
  for_each_strided(v.dims, v.strides, {}, [&](int64_t i, int64_t src, int64_t) { y[i] = x[v.offset + src]; });
}

std::string emit_gather(const StridedView& v, const std::string& x, const std::string& y) {
  const Shape dims = v.dims.empty() ? Shape{1} : v.dims;
  const std::vector<int64_t> strides = v.dims.empty() ? std::vector<int64_t>{1} : v.strides;
  return "{\n  static const long dims[] = " + cpp_int_list(dims) + ";\n  static const long strides[] = " +
         cpp_int_list(strides) + ";\n  hg_strided_copy(" + x + " + " + std::to_string(v.offset) + ", " + y + ", " +
         std::to_string(dims.size()) + ", dims, strides);\n}";
}

StridedView attrs_view(const Attrs& a, const Shape& in) {
  if (in.size() > 8) throw Error("rank above 8 is not supported");
  return slice_view(in, a.get_ints("begin"), a.get_ints("end"), a.get_ints("step"));
}

// slice_axis(axis, begin, end): slice along one axis; end None (kSliceNone) is the end.
StridedView slice_axis_view(const Attrs& a, const Shape& in) {
  const int axis = normalize_axis(a.get_int("axis"), in.size());
  std::vector<int64_t> begin(in.size(), kSliceNone), end(in.size(), kSliceNone);
  begin[axis] = a.get_int("begin");
  end[axis] = a.get_int("end");
  return slice_view(in, begin, end, {});
}

struct SplitGeometry {
  int axis;
  int64_t parts, part;
};

SplitGeometry split_geometry(const Attrs& a, const Shape& in) {
  const int axis = normalize_axis(a.get_int("axis"), in.size());
  const int64_t parts = a.get_int("num_outputs");
  if (parts <= 0 || in[axis] % parts)
    throw Error("cannot split axis " + std::to_string(axis) + " of " + shape_str(in) + " into " +
                std::to_string(parts) + " equal parts");
  return {axis, parts, in[axis] / parts};
}

StridedView split_view(const Attrs& a, const Shape& in, int64_t k) {
  const SplitGeometry g = split_geometry(a, in);
  std::vector<int64_t> begin(in.size(), kSliceNone), end(in.size(), kSliceNone);
  begin[g.axis] = k * g.part;
  end[g.axis] = (k + 1) * g.part;
  return slice_view(in, begin, end, {});
}

Shape split_output_shape(const Attrs& a, const Shape& in) {
  const SplitGeometry g = split_geometry(a, in);
  Shape out = in;
  out[g.axis] = g.part;
  if (a.get_bool("squeeze_axis")) {
    if (g.part != 1) throw Error("squeeze_axis needs parts of size 1");
    out.erase(out.begin() + g.axis);
  }
  return out;
}

OpDef view_op(const std::string& name, StridedView (*view)(const Attrs&, const Shape&)) {
  OpDef d;
  d.name = name;
  d.input_names = {"data"};
  d.fusion = FusionClass::kInjective;
  d.infer = [view](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{moved_values(in[0], view(a, in[0].shape).dims)};
  };
  d.reference = [view](const KernelIO& io) {
    with_element_bits(io.in_types[0].dtype, [&](auto element) {
      using T = decltype(element);
      gather(view(io.attrs, io.in_types[0].shape), io.input<T>(0), io.output<T>(0));
    });
  };
  d.reference_dtypes = all_dtypes();
  OpKernel kernel{[view](const EmitContext& ctx) {
    return KernelCall{{"strided_copy"},
                      emit_gather(view(ctx.node.attrs, ctx.in_types[0].shape), ctx.in[0], ctx.out[0])};
  }};
  kernel.dtypes = moved_value_dtypes();
  register_kernel(Backend::kCpp, d.name, kernel);
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  return d;
}

Attrs slice_attrs(std::vector<int64_t> b, std::vector<int64_t> e, std::vector<int64_t> s) {
  Attrs a;
  a.set("begin", std::move(b));
  a.set("end", std::move(e));
  a.set("step", std::move(s));
  return a;
}

const OpRegistrar slice_op([] {
  OpDef d = view_op("slice", attrs_view);
  d.aliases = {"crop"};
  d.summary = "begin:end:step per axis (None: the default end)";
  d.attrs = {{"begin", AttrKind::kInts, std::nullopt, "start per axis", {}},
             {"end", AttrKind::kInts, std::nullopt, "stop per axis (exclusive)", {}},
             {"step", AttrKind::kInts, std::vector<int64_t>{}, "step per axis; default 1", {}}};
  // Anything but all of axis 0, forwards: a batch's slice is not its items' slices.
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>&, const std::vector<bool>&) {
    const auto& begin = a.get_ints("begin");
    const auto& end = a.get_ints("end");
    const auto& step = a.get_ints("step");
    if (begin.empty()) return false;
    const bool from_start = begin[0] == 0 || begin[0] == kSliceNone;
    const bool to_end = end.empty() || end[0] == kSliceNone;
    const bool forwards = step.empty() || step[0] == 1 || step[0] == kSliceNone;
    return !(from_start && to_end && forwards);
  };
  d.examples = {{slice_attrs({0, 1}, {2, 4}, {}), {{3, 5}}},
                {slice_attrs({kSliceNone, -1}, {kSliceNone, 0}, {1, -2}), {{2, 7}}},
                {slice_attrs({1}, {kSliceNone}, {}), {{4, 2, 3}}},
                quantized_example(slice_attrs({0, 1, 0}, {1, 9, 3}, {1, 2, 1}),
                                  {quantized_data({1, 9, 3}, DType::kInt8, 0.05f, 5)}),
                quantized_example(slice_attrs({kSliceNone, -1}, {kSliceNone, 0}, {1, -2}),
                                  {quantized_data({2, 7}, DType::kUInt8, 0.02f, 100)})};
  return d;
}());

const OpRegistrar slice_axis_op([] {
  OpDef d = view_op("slice_axis", slice_axis_view);
  d.summary = "begin:end along one axis";
  d.attrs = {{"axis", AttrKind::kInt, std::nullopt, "the axis", {}},
             {"begin", AttrKind::kInt, std::nullopt, "start", {}},
             {"end", AttrKind::kInt, kSliceNone, "stop (exclusive); default: the end", {}}};
  d.mixes_first_axis = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<bool>&) {
    return is_first_axis(a.get_int("axis"), in[0].shape.size()) &&
           (a.get_int("begin") != 0 || a.get_int("end") != kSliceNone);
  };
  Attrs a;
  a.set("axis", int64_t{1});
  a.set("begin", int64_t{1});
  a.set("end", int64_t{-1});
  Attrs last;
  last.set("axis", int64_t{-1});
  last.set("begin", int64_t{2});
  last.set("end", kSliceNone);
  d.examples = {{a, {{2, 5, 3}}},
                quantized_example(a, {quantized_data({2, 5, 3}, DType::kInt8, 0.05f, -2)}),
                quantized_example(last, {quantized_data({3, 6}, DType::kUInt8, 0.02f, 130)})};
  return d;
}());

const OpRegistrar split_op([] {
  OpDef d;
  d.name = "SliceChannel";
  d.mixes_first_axis = mixes_along_axis_attr("axis");
  d.aliases = {"split"};
  d.summary = "equal parts along an axis, one output each";
  d.input_names = {"data"};
  d.attrs = {{"num_outputs", AttrKind::kInt, std::nullopt, "number of parts", {}},
             {"axis", AttrKind::kInt, int64_t{1}, "the axis to split", {}},
             {"squeeze_axis", AttrKind::kBool, false, "drop the split axis (parts of size 1)", {}}};
  d.fusion = FusionClass::kInjective;
  d.output_arity = [](const Attrs& a) { return static_cast<int>(a.get_int("num_outputs")); };
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>(static_cast<std::size_t>(a.get_int("num_outputs")),
                                   TensorType{split_output_shape(a, in[0].shape), in[0].dtype});
  };
  d.reference = [](const KernelIO& io) {
    for (std::size_t k = 0; k < io.out.size(); ++k)
      gather(split_view(io.attrs, io.in_types[0].shape, static_cast<int64_t>(k)), io.input<float>(0),
             io.output<float>(k));
  };
  register_kernel(Backend::kCpp, d.name, OpKernel{[](const EmitContext& ctx) {
                    std::string code;
                    for (std::size_t k = 0; k < ctx.out.size(); ++k)
                      code += (k ? "\n" : "") +
                              emit_gather(split_view(ctx.node.attrs, ctx.in_types[0].shape, static_cast<int64_t>(k)),
                                          ctx.in[0], ctx.out[k]);
                    return KernelCall{{"strided_copy"}, code};
                  }});
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs three, squeeze;
  three.set("num_outputs", int64_t{3});
  squeeze.set("num_outputs", int64_t{2});
  squeeze.set("axis", int64_t{-1});
  squeeze.set("squeeze_axis", true);
  d.examples = {{three, {{2, 6, 2}}}, {squeeze, {{3, 2}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
