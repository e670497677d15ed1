// Concat along `dim` (Gluon's HybridConcurrent). Each input is copied into its
// slice of the output viewed as [outer, total, inner]. Quantized inputs go
// into the output's quantization (out_scale, out_zero_point; without them
// every input must share one, which the output keeps): an input already in
// it is copied, any other requantized as TFLite's REQUANTIZE does.
#include <algorithm>
#include <cstring>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

std::vector<TensorType> concat_infer(const Attrs& a, const std::vector<TensorType>& in) {
  if (a.has("num_args") && a.get_int("num_args") != static_cast<int64_t>(in.size()))
    throw Error("num_args is " + std::to_string(a.get_int("num_args")) + " but the node has " +
                std::to_string(in.size()) + " inputs");
  const int axis = normalize_axis(a.get_int("dim"), in[0].shape.size());
  Shape out = in[0].shape;
  for (std::size_t i = 1; i < in.size(); ++i) {
    const Shape& s = in[i].shape;
    if (in[i].dtype != in[0].dtype)
      throw Error("input " + std::to_string(i) + " is " + dtype_name(in[i].dtype) + ", input 0 " + dtype_name(in[0].dtype));
    bool same = s.size() == out.size();
    for (std::size_t d = 0; same && d < s.size(); ++d) same = static_cast<int>(d) == axis || s[d] == out[d];
    if (!same)
      throw Error("input " + std::to_string(i) + " has shape " + shape_str(s) + ", which does not match " +
                  shape_str(in[0].shape) + " outside axis " + std::to_string(axis));
    out[axis] += s[axis];
  }
  if (std::none_of(in.begin(), in.end(), [](const TensorType& t) { return !t.quantization.empty(); }))
    return {quantized_output(a, in[0], out)};  // float (or plain integers): no out_scale
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i].quantization.empty() || in[i].quantization.axis ||
        (in[i].dtype != DType::kInt8 && in[i].dtype != DType::kUInt8))
      throw Error("input " + std::to_string(i) + " is " + in[i].str() +
                  ": with quantized inputs every input must be int8 or uint8 quantized per tensor");
  }
  if (has_output_quantization(a)) return {quantized_output(a, in[0], out)};
  for (std::size_t i = 1; i < in.size(); ++i)
    if (in[i].quantization != in[0].quantization)
      throw Error("input " + std::to_string(i) + " is " + in[i].str() + ", input 0 " + in[0].str() +
                  ": inputs quantized differently need the output's scale, attribute out_scale");
  return {TensorType{out, in[0].dtype, in[0].quantization}};
}

// Input i's requantization into the output: TFLite's REQUANTIZE by in_scale / out_scale.
Requantization requantization_into(const TensorType& in, const TensorType& out) {
  return requantization(static_cast<double>(in.quantization.scale[0]) / out.quantization.scale[0]);
}

void concat_reference(const KernelIO& io) {
  const Shape& out = io.out_types[0].shape;
  const int axis = normalize_axis(io.attrs.get_int("dim"), out.size());
  const int64_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, out.size());
  int64_t offset = 0;
  // Bytes, so every dtype is served alike.
  const auto size = static_cast<int64_t>(dtype_size(io.out_types[0].dtype));
  auto* bytes_out = reinterpret_cast<unsigned char*>(io.output<float>(0));
  const TensorType& out_type = io.out_types[0];
  for (std::size_t i = 0; i < io.in.size(); ++i) {
    const int64_t part = io.in_types[i].shape[axis] * inner;
    const TensorType& in = io.in_types[i];
    if (in.quantization != out_type.quantization) {
      const Requantization r = requantization_into(in, out_type);
      const std::pair<std::int32_t, std::int32_t> range = int32_range(out_type.dtype);  // captured: no binding
      const std::int32_t lo = range.first, hi = range.second;
      const auto in_zero = static_cast<std::int32_t>(in.quantization.zero_point[0]);
      const auto out_zero = static_cast<std::int32_t>(out_type.quantization.zero_point[0]);
      with_value_type(out_type.dtype, [&](auto value) {
        using T = decltype(value);
        const T* x = io.input<T>(i);
        T* y = io.output<T>(0);
        for (int64_t o = 0; o < outer; ++o)
          for (int64_t j = 0; j < part; ++j)
            y[o * out[axis] * inner + offset + j] = static_cast<T>(
                requantize_clamp(static_cast<std::int32_t>(x[o * part + j]) - in_zero, r, out_zero, lo, hi));
      });
    } else {
      const auto* bytes_in = reinterpret_cast<const unsigned char*>(io.input<float>(i));
      for (int64_t o = 0; o < outer; ++o)
        std::memcpy(bytes_out + (o * out[axis] * inner + offset) * size, bytes_in + o * part * size,
                    static_cast<std::size_t>(part * size));
    }
    offset += part;
  }
}

KernelCall concat_emit_cpp(const EmitContext& ctx) {
  const Shape& out = ctx.out_types[0].shape;
  const int axis = normalize_axis(ctx.node.attrs.get_int("dim"), out.size());
  const int64_t outer = dims_product(out, 0, axis), inner = dims_product(out, axis + 1, out.size());
  std::string code;
  bool copies = false;
  const bool integers = ctx.out_types[0].dtype != DType::kFloat32;
  int64_t offset = 0;
  for (std::size_t i = 0; i < ctx.in.size(); ++i) {
    const int64_t part = ctx.in_types[i].shape[axis] * inner;
    const bool placed = i < ctx.in_placed.size() && ctx.in_placed[i];
    const std::string slice = ctx.in[i] + ", " + ctx.out[0] + " + " + std::to_string(offset) + ", " +
                              std::to_string(outer) + ", " + std::to_string(part) + ", " +
                              std::to_string(out[axis] * inner);
    if (!code.empty()) code += "\n";
    if (placed) {
      code += "// input " + std::to_string(i) + " was written in place by its producer";
    } else if (integers && ctx.in_types[i].quantization != ctx.out_types[0].quantization) {
      const TensorType &in = ctx.in_types[i], &y = ctx.out_types[0];
      const Requantization r = requantization_into(in, y);
      const std::pair<std::int32_t, std::int32_t> range = int32_range(y.dtype);  // captured: no binding
      const std::int32_t lo = range.first, hi = range.second;
      code += "hg_concat_requantize_q8(" + slice + ", " + int_str(in.quantization.zero_point[0]) + ", " +
              int_str(r.multiplier) + ", " + int_str(r.shift) + ", " + int_str(y.quantization.zero_point[0]) + ", " +
              int_str(lo) + ", " + int_str(hi) + ");";
      copies = true;
    } else if (integers) {
      code += "hg_concat_copy_q8(" + slice + ");";
      copies = true;
    } else {
      code += "hg_concat_part(" + slice + ");";
      copies = true;
    }
    offset += part;
  }
  if (!copies) return {{}, code};
  return {{integers ? "concat_q8" : "concat"}, code};
}

// With nothing before the axis but size-1 dims, input i is one contiguous
// block of the output, starting after the inputs before it; unless an
// input must be requantized into the output.
std::vector<std::size_t> input_placement(const Attrs& a, const std::vector<TensorType>& in, const TensorType& out) {
  const int axis = normalize_axis(a.get_int("dim"), out.shape.size());
  if (dims_product(out.shape, 0, axis) != 1) return {};
  for (const auto& t : in)
    if (t.quantization != out.quantization) return {};
  std::vector<std::size_t> offsets;
  std::size_t offset = 0;
  for (const auto& t : in) {
    offsets.push_back(offset);
    offset += t.bytes();
  }
  return offsets;
}

Attrs concat(int64_t dim, int64_t n) {
  Attrs a;
  a.set("dim", dim);
  a.set("num_args", n);
  return a;
}

const OpRegistrar concat_op([] {
  OpDef d;
  d.name = "Concat";
  d.mixes_first_axis = mixes_along_axis_attr("dim");
  d.aliases = {"concat"};
  d.summary = "join inputs along an axis";
  d.input_names = {"data0", "data1", "..."};
  d.min_inputs = 1;
  d.max_inputs = -1;
  d.attrs = with_output_quantization(
      {{"dim", AttrKind::kInt, int64_t{1}, "the axis to join", {}},
       {"num_args", AttrKind::kInt, int64_t{0}, "number of inputs (MXNet bookkeeping; 0: any)", {}}});
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    Attrs checked = a;
    if (a.get_int("num_args") == 0) checked.erase("num_args");
    return concat_infer(checked, in);
  };
  d.reference = concat_reference;
  d.reference_dtypes = all_dtypes();
  register_kernel(Backend::kCpp, d.name, [] {
    OpKernel k{concat_emit_cpp};
    k.dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
    return k;
  }());
  d.input_placement = input_placement;
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  d.examples = {{concat(1, 3), {{2, 3, 4}, {2, 1, 4}, {2, 2, 4}}},
                {concat(0, 2), {{1, 5}, {3, 5}}},
                {concat(-1, 2), {{2, 2, 3}, {2, 2, 1}}},
                // Quantized: requantized into the output's scale but for the input already in it (copied);
                // one quantization shared by all (copies, placed in the output); uint8; a scale grown 8x
                // (the multiplier's shift above 0).
                quantized_example(with_output_quantization(concat(1, 3), 0.05, -3),
                                  {quantized_data({2, 3, 4}, DType::kInt8, 0.03f, 10),
                                   quantized_data({2, 2, 4}, DType::kInt8, 0.05f, -3),
                                   quantized_data({2, 1, 4}, DType::kInt8, 0.11f, -100)}),
                quantized_example(concat(0, 2), {quantized_data({1, 5}, DType::kInt8, 0.02f, 7),
                                                 quantized_data({3, 5}, DType::kInt8, 0.02f, 7)}),
                quantized_example(with_output_quantization(concat(-1, 2), 0.01, 100),
                                  {quantized_data({2, 2, 3}, DType::kUInt8, 0.08f, 128),
                                   quantized_data({2, 2, 5}, DType::kUInt8, 0.004f, 30)})};
  return d;
}());

}  // namespace
}  // namespace hybgen
