// Pad (MXNet's pad): constant, edge or reflect padding. MXNet takes 4-D and
// 5-D inputs without padding on N and C; any rank up to 8 works here, with
// pad_width as (before, after) per axis.
#include <algorithm>

#include "ir/error.h"
#include "ops/indexing.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

int pad_mode(const Attrs& a) {
  const std::string& m = a.get_string("mode");
  return m == "constant" ? 0 : m == "edge" ? 1 : 2;
}

Shape padded_shape(const Attrs& a, const Shape& in) {
  const auto& w = a.get_ints("pad_width");
  if (in.empty() || in.size() > 8) throw Error("Pad takes ranks 1 to 8, got " + shape_str(in));
  if (w.size() != 2 * in.size())
    throw Error("pad_width " + cpp_int_list(w) + " needs 2 entries per axis of " + shape_str(in));
  if (num_elements(in) == 0) throw Error("Pad of an empty tensor " + shape_str(in));
  Shape out;
  for (std::size_t d = 0; d < in.size(); ++d) {
    const int64_t lo = w[2 * d], hi = w[2 * d + 1];
    if (lo < 0 || hi < 0) throw Error("pad_width " + cpp_int_list(w) + " has a negative entry");
    if (pad_mode(a) == 2 && (lo >= in[d] || hi >= in[d]))
      throw Error("reflect padding of " + std::to_string(std::max(lo, hi)) + " on axis " + std::to_string(d) +
                  " needs an axis longer than that, it has " + std::to_string(in[d]));
    if (lo > (int64_t{1} << 40) || hi > (int64_t{1} << 40)) throw Error("pad_width " + cpp_int_list(w) + " is too large");
    out.push_back(in[d] + lo + hi);
  }
  check_output_size(out, "Pad");
  return out;
}

// The fill of mode constant as a value of `type`: constant_value itself,
// or on quantized integers its quantization (TFLite pads int8 with the
// zero point, the real 0).
double fill_value(const Attrs& a, const TensorType& type) {
  const double value = a.get_float("constant_value");
  if (type.quantization.empty()) return value;
  const auto range = integer_dtype_range(type.dtype);
  return quantize_float(static_cast<float>(value), type.quantization.scale[0],
                        static_cast<std::int32_t>(type.quantization.zero_point[0]),
                        static_cast<std::int32_t>(range.first), static_cast<std::int32_t>(range.second));
}

int64_t source(int64_t i, int64_t n, int mode) {
  if (i < 0) return mode == 1 ? 0 : -i;
  if (i >= n) return mode == 1 ? n - 1 : 2 * (n - 1) - i;
  return i;
}

const OpRegistrar pad_op([] {
  OpDef d;
  d.name = "Pad";
  d.aliases = {"pad"};
  d.summary = "pad with a constant, the edge values, or their reflection";
  d.input_names = {"data"};
  d.attrs = {{"mode", AttrKind::kString, std::string("constant"), "how to fill", {"constant", "edge", "reflect"}},
             {"pad_width", AttrKind::kInts, std::nullopt, "(before, after) per axis", {}},
             {"constant_value", AttrKind::kFloat, 0.0, "the fill of mode constant", {}}};
  d.fusion = FusionClass::kInjective;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{moved_values(in[0], padded_shape(a, in[0].shape))};
  };
  d.reference = [](const KernelIO& io) {
    const Shape& in = io.in_types[0].shape;
    const Shape& out = io.out_types[0].shape;
    const auto& w = io.attrs.get_ints("pad_width");
    const int mode = pad_mode(io.attrs);
    const double fill = fill_value(io.attrs, io.in_types[0]);
    with_value_type(io.in_types[0].dtype, [&](auto element) {
      using T = decltype(element);
      const T value = static_cast<T>(fill);
      std::vector<int64_t> zero(out.size(), 0);
      for_each_strided(out, zero, {}, [&](int64_t o, int64_t, int64_t) {
        int64_t rest = o, src = 0, stride = 1;
        bool outside = false;
        for (int dim = static_cast<int>(out.size()) - 1; dim >= 0; --dim) {
          const int64_t i = rest % out[dim] - w[2 * dim];
          rest /= out[dim];
          if (i < 0 || i >= in[dim]) outside = true;
          src += source(i, in[dim], mode) * stride;
          stride *= in[dim];
        }
        io.output<T>(0)[o] = mode == 0 && outside ? value : io.input<T>(0)[src];
      });
    });
  };
  d.reference_dtypes = moved_value_dtypes();
  OpKernel kernel{[](const EmitContext& ctx) {
    const auto& w = ctx.node.attrs.get_ints("pad_width");
    std::vector<int64_t> before;
    for (std::size_t i = 0; i < w.size(); i += 2) before.push_back(w[i]);
    const double value = fill_value(ctx.node.attrs, ctx.in_types[0]);
    const std::string fill =
        ctx.in_types[0].quantization.empty() ? cpp_float(value) : std::to_string(static_cast<int64_t>(value));
    return KernelCall{{"pad"},
                      "{\n  static const long in_dims[] = " + cpp_int_list(ctx.in_types[0].shape) +
                          ";\n  static const long out_dims[] = " + cpp_int_list(ctx.out_types[0].shape) +
                          ";\n  static const long before[] = " + cpp_int_list(before) + ";\n  hg_pad(" + ctx.in[0] +
                          ", " + ctx.out[0] + ", " + std::to_string(before.size()) + ", in_dims, out_dims, before, " +
                          std::to_string(pad_mode(ctx.node.attrs)) + ", " + fill + ");\n}"};
  }};
  kernel.dtypes = moved_value_dtypes();
  register_kernel(Backend::kCpp, d.name, kernel);
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  auto pad = [](const std::string& mode, std::vector<int64_t> width, double value) {
    Attrs a;
    a.set("mode", mode);
    a.set("pad_width", std::move(width));
    a.set("constant_value", value);
    return a;
  };
  d.examples = {{pad("constant", {0, 0, 0, 0, 1, 2, 2, 1}, 0.5), {{1, 2, 3, 4}}},
                {pad("edge", {0, 0, 0, 0, 2, 1, 0, 3}, 0.0), {{2, 1, 3, 2}}},
                {pad("reflect", {0, 0, 0, 0, 2, 1, 1, 2}, 0.0), {{1, 2, 3, 4}}},
                {pad("reflect", {0, 0, 0, 0, 1, 0, 0, 1, 1, 1}, 0.0), {{1, 1, 2, 2, 3}}},
                {pad("constant", {0, 0, 0, 0, 0, 0, 1, 1}, -1.0), {{1, 1, 1, 1}}},
                quantized_example(pad("constant", {0, 0, 0, 0, 1, 2, 2, 1}, 0.0),
                                  {quantized_data({1, 2, 3, 4}, DType::kInt8, 0.05f, -7)}),
                quantized_example(pad("constant", {0, 0, 1, 1, 0, 3}, 0.3),
                                  {quantized_data({2, 3, 2}, DType::kUInt8, 0.02f, 120)}),
                quantized_example(pad("reflect", {0, 0, 0, 0, 2, 1, 1, 2}, 0.0),
                                  {quantized_data({1, 2, 3, 4}, DType::kInt8, 0.05f, 3)})};
  return d;
}());

}  // namespace
}  // namespace hybgen
