// clip(a_min, a_max): clamp every element (relu6 is clip(0, 6)).
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

const OpRegistrar clip_op([] {
  OpDef d;
  d.name = "clip";
  d.summary = "clamp to [a_min, a_max]";
  d.input_names = {"data"};
  d.attrs = {{"a_min", AttrKind::kFloat, std::nullopt, "lower bound", {}},
             {"a_max", AttrKind::kFloat, std::nullopt, "upper bound", {}}};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) {
    check_float_or_quantized(in[0]);
    return std::vector<TensorType>{in[0]};
  };
  d.reference = [](const KernelIO& io) {
    const TensorType& in = io.in_types[0];
    if (!in.quantization.empty()) {  // the bounds quantized as values are
      with_value_type(in.dtype, [&](auto value) {
        using T = decltype(value);
        const auto lo = static_cast<T>(quantized_bound(io.attrs.get_float("a_min"), in.quantization, in.dtype));
        const auto hi = static_cast<T>(quantized_bound(io.attrs.get_float("a_max"), in.quantization, in.dtype));
        for (int64_t i = 0; i < in.num_elements(); ++i) {
          const T v = io.input<T>(0)[i];
          io.output<T>(0)[i] = v < lo ? lo : (v > hi ? hi : v);
        }
      });
      return;
    }
    const float lo = static_cast<float>(io.attrs.get_float("a_min"));
    const float hi = static_cast<float>(io.attrs.get_float("a_max"));
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) {
      const float v = io.input<float>(0)[i];
      io.output<float>(0)[i] = v < lo ? lo : (v > hi ? hi : v);
    }
  };
  d.emit_scalar = [](const ScalarSite& s) {
    const TensorType& in = s.in_types[0];
    if (!in.quantization.empty()) {
      // A bound at the dtype's own limit clamps nothing, and comparing with it
      // would be always false (-Wtype-limits): it is left out.
      const std::string type = dtype_c_type(in.dtype);
      const auto [dtype_min, dtype_max] = integer_dtype_range(in.dtype);
      const int64_t lo_value = quantized_bound(s.attrs.get_float("a_min"), in.quantization, in.dtype);
      const int64_t hi_value = quantized_bound(s.attrs.get_float("a_max"), in.quantization, in.dtype);
      const std::string lo = "static_cast<" + type + ">(" + int_str(lo_value) + ")";
      const std::string hi = "static_cast<" + type + ">(" + int_str(hi_value) + ")";
      const std::string upper = hi_value < dtype_max ? s.in[0] + " > " + hi + " ? " + hi + " : " + s.in[0] : s.in[0];
      if (lo_value <= dtype_min) return upper;
      return s.in[0] + " < " + lo + " ? " + lo + " : (" + upper + ")";
    }
    const std::string lo = cpp_float(s.attrs.get_float("a_min")), hi = cpp_float(s.attrs.get_float("a_max"));
    return s.in[0] + " < " + lo + " ? " + lo + " : (" + s.in[0] + " > " + hi + " ? " + hi + " : " + s.in[0] + ")";
  };
  Attrs relu6, narrow;
  relu6.set("a_min", 0.0);
  relu6.set("a_max", 6.0);
  narrow.set("a_min", -0.5);
  narrow.set("a_max", 0.25);
  d.reference_dtypes = d.scalar_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  d.examples = {{relu6, {{2, 9}}},
                {narrow, {{3, 4, 5}}},
                quantized_example(relu6, {quantized_data({2, 19}, DType::kInt8, 0.05f, -20)}),
                quantized_example(narrow, {quantized_data({3, 13}, DType::kUInt8, 0.01f, 60)}),
                // Both bounds at the dtype's limits (0 at -128, 6 past 127): nothing to clamp.
                quantized_example(relu6, {quantized_data({2, 5}, DType::kInt8, 0.01f, -128)})};
  return d;
}());

// The fused loop computes it; after a GEMM or convolution it clamps vectors.
const KernelRegistrar clip_cpp(Backend::kCpp, "clip", [] {
  OpKernel k;
  k.vector_epilogue = [](const Attrs& a) -> std::string {
    if (!(a.get_float("a_min") <= a.get_float("a_max"))) return "";
    return "HgClampEpilogue(" + cpp_float(a.get_float("a_min")) + ", " + cpp_float(a.get_float("a_max")) + ")";
  };
  return k;
}());

}  // namespace
}  // namespace hybgen
