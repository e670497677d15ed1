// Shape-only ops: Reshape (with MXNet's special codes), Flatten, and the
// identity copy (_copy). The data is unchanged, so each may run in place and
// the emitted copy is skipped when input and output share a buffer.
#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

// MXNet's Reshape codes (src/operator/tensor/matrix_op-inl.h): 0 copies an
// input dim, -1 is inferred, -2 copies all remaining dims, -3 merges two dims,
// -4 splits one into the next two values (one may be -1). reverse=true
// applies the rules right to left.
Shape reshape_shape(const Shape& input, std::vector<int64_t> spec, bool reverse) {
  Shape in = input;
  if (reverse) {
    std::reverse(in.begin(), in.end());
    std::reverse(spec.begin(), spec.end());
  }
  Shape out;
  std::size_t src = 0;
  int inferred = -1;
  auto take = [&](const char* code) {
    if (src >= in.size())
      throw Error(std::string("shape code ") + code + " has no input dim left in " + shape_str(input));
    return in[src++];
  };
  for (std::size_t i = 0; i < spec.size(); ++i) {
    const int64_t d = spec[i];
    if (d == 0) {
      out.push_back(take("0"));
    } else if (d == -1) {
      if (inferred >= 0) throw Error("shape has more than one -1");
      inferred = static_cast<int>(out.size());
      out.push_back(1);
      ++src;
    } else if (d == -2) {
      while (src < in.size()) out.push_back(in[src++]);
    } else if (d == -3) {
      const int64_t a = take("-3"), b = take("-3");
      out.push_back(a * b);
    } else if (d == -4) {
      const int64_t whole = take("-4");
      if (i + 2 >= spec.size()) throw Error("shape code -4 must be followed by two dims");
      int64_t d1 = spec[++i], d2 = spec[++i];
      if (d1 == -1 && d2 > 0) d1 = whole / d2;
      if (d2 == -1 && d1 > 0) d2 = whole / d1;
      if (d1 <= 0 || d2 <= 0 || d1 * d2 != whole)
        throw Error("shape code -4 cannot split dim " + std::to_string(whole) + " into " + std::to_string(spec[i - 1]) +
                    " x " + std::to_string(spec[i]));
      out.push_back(d1);
      out.push_back(d2);
    } else if (d > 0) {
      out.push_back(d);
      ++src;
    } else {
      throw Error("invalid shape code " + std::to_string(d));
    }
  }
  const int64_t total = num_elements(input);
  if (inferred >= 0) {
    const int64_t known = num_elements(out);
    if (known == 0 || total % known != 0)
      throw Error("cannot infer -1 reshaping " + shape_str(input) + " with " + shape_str(spec));
    out[static_cast<std::size_t>(inferred)] = total / known;
  }
  if (reverse) std::reverse(out.begin(), out.end());
  if (num_elements(out) != total)
    throw Error("cannot reshape " + shape_str(input) + " (" + std::to_string(total) + " elements) to " +
                shape_str(out));
  return out;
}

// Any dtype: the bytes as they are (the buffers may be one, in place).
void copy_reference(const KernelIO& io) {
  std::memmove(io.output<float>(0), io.input<float>(0), io.in_types[0].bytes());
}

KernelCall copy_emit(const EmitContext& ctx) {
  return {{"copy"}, "hg_copy(" + ctx.in[0] + ", " + ctx.out[0] + ", " +
                        std::to_string(ctx.out_types[0].num_elements()) + ");"};
}

OpDef shape_op(const std::string& name, const std::string& summary) {
  OpDef d;
  d.name = name;
  d.summary = summary;
  d.input_names = {"data"};
  d.fusion = FusionClass::kInjective;
  d.inplace = true;
  d.view = true;
  d.reference = copy_reference;
  d.reference_dtypes = all_dtypes();
  register_kernel(Backend::kCpp, d.name, [] {
    OpKernel k{copy_emit};
    k.dtypes = moved_value_dtypes();
    return k;
  }());
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  return d;
}

Attrs reshape_attrs(std::vector<int64_t> shape, bool reverse = false) {
  Attrs a;
  a.set("shape", std::move(shape));
  a.set("reverse", reverse);
  return a;
}

const OpRegistrar reshape([] {
  OpDef d = shape_op("Reshape", "same data, new shape (MXNet codes 0, -1, -2, -3, -4)");
  d.aliases = {"reshape"};
  d.attrs = {{"shape", AttrKind::kInts, std::vector<int64_t>{}, "target shape with special codes", {}},
             {"reverse", AttrKind::kBool, false, "apply the codes right to left", {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{
        moved_values(in[0], reshape_shape(in[0].shape, a.get_ints("shape"), a.get_bool("reverse")))};
  };
  d.examples = {{reshape_attrs({0, -1}), {{2, 3, 4}}},
                {reshape_attrs({-3, -2}), {{2, 3, 4, 5}}},
                {reshape_attrs({-4, 2, -1, 0}), {{6, 5}}},
                {reshape_attrs({-1, 3}, true), {{4, 6}}},
                quantized_example(reshape_attrs({0, -1}), {quantized_data({2, 3, 5}, DType::kInt8, 0.05f, -1)}),
                quantized_example(reshape_attrs({-1}), {quantized_data({3, 4}, DType::kUInt8, 0.05f, 128)})};
  return d;
}());

const OpRegistrar flatten([] {
  OpDef d = shape_op("Flatten", "(N, d1, d2, ...) -> (N, d1*d2*...)");
  d.aliases = {"flatten"};
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) {
    const Shape& s = in[0].shape;
    if (s.empty()) throw Error("cannot flatten a scalar");
    return std::vector<TensorType>{moved_values(in[0], {s[0], dims_product(s, 1, s.size())})};
  };
  d.examples = {{Attrs{}, {{2, 3, 4}}},
                {Attrs{}, {{5}}},
                quantized_example(Attrs{}, {quantized_data({2, 3, 2, 2}, DType::kUInt8, 0.05f, 128)}),
                quantized_example(Attrs{}, {quantized_data({3, 2, 5}, DType::kInt8, 0.05f, 0)})};
  return d;
}());

// expand_dims: insert a size-1 axis at `axis` (may be negative: counted from
// the end of the output).
const OpRegistrar expand_dims([] {
  OpDef d = shape_op("expand_dims", "insert a size-1 axis");
  d.attrs = {{"axis", AttrKind::kInt, std::nullopt, "where the new axis goes", {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    Shape s = in[0].shape;
    const int axis = normalize_axis(a.get_int("axis"), s.size() + 1);
    s.insert(s.begin() + axis, 1);
    return std::vector<TensorType>{moved_values(in[0], s)};
  };
  Attrs front, back;
  front.set("axis", int64_t{0});
  back.set("axis", int64_t{-1});
  d.examples = {{front, {{3, 4}}},
                {back, {{2, 3}}},
                quantized_example(front, {quantized_data({3, 4}, DType::kInt8, 0.05f, 2)}),
                quantized_example(back, {quantized_data({2, 3}, DType::kUInt8, 0.05f, 100)})};
  return d;
}());

// squeeze: drop the given size-1 axes, or every size-1 axis when none given.
const OpRegistrar squeeze([] {
  OpDef d = shape_op("squeeze", "remove size-1 axes");
  d.attrs = {{"axis", AttrKind::kInts, std::vector<int64_t>{}, "axes to remove; empty: all of size 1", {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape& s = in[0].shape;
    std::vector<bool> drop(s.size(), false);
    const auto& axes = a.get_ints("axis");
    for (int64_t ax : axes) {
      const int i = normalize_axis(ax, s.size());
      if (s[i] != 1) throw Error("cannot squeeze axis " + std::to_string(ax) + " of size " + std::to_string(s[i]));
      drop[i] = true;
    }
    Shape out;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (!(axes.empty() ? s[i] == 1 : drop[i])) out.push_back(s[i]);
    return std::vector<TensorType>{moved_values(in[0], out)};
  };
  Attrs one;
  one.set("axis", std::vector<int64_t>{1});
  d.examples = {{Attrs{}, {{1, 3, 1, 2}}},
                {one, {{2, 1, 3}}},
                quantized_example(Attrs{}, {quantized_data({1, 3, 1, 2}, DType::kInt8, 0.05f, -4)}),
                quantized_example(one, {quantized_data({2, 1, 3}, DType::kUInt8, 0.05f, 128)})};
  return d;
}());

const OpRegistrar copy([] {
  OpDef d = shape_op("_copy", "identity");
  d.aliases = {"identity"};
  d.fusion = FusionClass::kElementwise;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  d.is_identity = [](const Attrs&) { return true; };
  d.examples = {{Attrs{}, {{3, 3}}},
                quantized_example(Attrs{}, {quantized_data({3, 3}, DType::kInt8, 0.05f, 1)}),
                quantized_example(Attrs{}, {quantized_data({2, 3}, DType::kUInt8, 0.05f, 128)})};
  return d;
}());

}  // namespace
}  // namespace hybgen
