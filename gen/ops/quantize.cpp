// quantize and dequantize: the conversions between float32 and quantized
// integers (docs/quantization.md). quantize rounds x / out_scale half away
// from zero, adds out_zero_point and saturates at out_dtype's range
// (TFLite's quantize); dequantize gives scale * (q - zero_point) from its
// input's own quantization, per tensor or per axis. Both are elementwise, so
// they fuse into the loops and epilogues around them.
#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

const std::vector<DType>& float32_int8_uint8() {
  static const std::vector<DType> v{DType::kFloat32, DType::kInt8, DType::kUInt8};
  return v;
}

const OpRegistrar quantize_op([] {
  OpDef d;
  d.name = "quantize";
  d.summary = "float32 to a quantized integer: round(x / out_scale) + out_zero_point, saturated";
  d.input_names = {"data"};
  d.inplace = true;  // the memory plan shares a buffer only between values of the same bytes
  d.attrs = {
      {"out_scale", AttrKind::kFloat, std::nullopt, "the scale of the output", {}},
      {"out_zero_point", AttrKind::kInt, int64_t{0}, "the zero point of the output", {}},
      {"out_dtype", AttrKind::kString, std::string("int8"), "the integer type of the output", {"int8", "uint8"}}};
  d.fusion = FusionClass::kElementwise;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    if (in[0].dtype != DType::kFloat32) throw Error("the input is " + in[0].str() + ", expected float32");
    TensorType out{in[0].shape, parse_dtype(a.get_string("out_dtype")),
                   Quantization::per_tensor(static_cast<float>(a.get_float("out_scale")), a.get_int("out_zero_point"))};
    check_quantization(out, "the output");
    return std::vector<TensorType>{out};
  };
  d.reference = [](const KernelIO& io) {
    const TensorType& out = io.out_types[0];
    const std::pair<std::int32_t, std::int32_t> range = int32_range(out.dtype);
    const std::int32_t lo = range.first, hi = range.second;
    const float scale = out.quantization.scale[0];
    const auto zero_point = static_cast<std::int32_t>(out.quantization.zero_point[0]);
    const float* x = io.input<float>(0);
    with_value_type(out.dtype, [&](auto value) {
      using T = decltype(value);
      T* y = io.output<T>(0);
      for (int64_t i = 0; i < out.num_elements(); ++i)
        y[i] = static_cast<T>(quantize_float(x[i], scale, zero_point, lo, hi));
    });
  };
  d.reference_dtypes = float32_int8_uint8();
  d.scalar_dtypes = float32_int8_uint8();
  d.emit_scalar = [](const ScalarSite& s) {
    const auto [lo, hi] = int32_range(s.out_type.dtype);
    return "static_cast<" + dtype_c_type(s.out_type.dtype) + ">(hg_quantize_float(" + s.in[0] + ", " +
           cpp_float(s.out_type.quantization.scale[0]) + ", " + int_str(s.out_type.quantization.zero_point[0]) + ", " +
           int_str(lo) + ", " + int_str(hi) + "))";
  };
  d.scalar_kernels = {"quantized"};
  Attrs centred, saturating;
  centred.set("out_scale", 0.02);
  centred.set("out_zero_point", int64_t{-3});
  saturating.set("out_scale", 0.01);
  saturating.set("out_zero_point", int64_t{20});
  saturating.set("out_dtype", std::string("uint8"));
  d.examples = {{centred, {{3, 17}}}, {saturating, {{2, 33}}}};
  return d;
}());

const OpRegistrar dequantize_op([] {
  OpDef d;
  d.name = "dequantize";
  d.summary = "a quantized integer to float32: scale * (q - zero_point), per tensor or per axis";
  d.input_names = {"data"};
  d.inplace = true;
  d.fusion = FusionClass::kElementwise;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) {
    if (in[0].quantization.empty()) throw Error("the input is " + in[0].str() + ", not a quantized integer");
    return std::vector<TensorType>{TensorType{in[0].shape, DType::kFloat32}};
  };
  d.reference = [](const KernelIO& io) {
    const TensorType& in = io.in_types[0];
    const Quantization& q = in.quantization;
    // Per axis: the index along the axis is (i / inner) % n.
    int64_t n = 1, inner = 1;
    if (q.axis) {
      const AxisView view = axis_view(in.shape, *q.axis);
      n = view.n;
      inner = view.inner;
    }
    float* y = io.output<float>(0);
    with_value_type(in.dtype, [&](auto value) {
      using T = decltype(value);
      const T* x = io.input<T>(0);
      for (int64_t i = 0; i < in.num_elements(); ++i) {
        const std::size_t c = q.axis ? static_cast<std::size_t>((i / inner) % n) : 0;
        y[i] =
            dequantize_value(static_cast<std::int32_t>(x[i]), static_cast<std::int32_t>(q.zero_point[c]), q.scale[c]);
      }
    });
  };
  // int32 (a bias) is dequantized at generation time only: no example makes one at run time.
  d.reference_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8, DType::kInt32};
  d.scalar_dtypes = float32_int8_uint8();
  d.emit_scalar = [](const ScalarSite& s) {
    const Quantization& q = s.in_types[0].quantization;
    if (q.axis)
      throw Error("dequantize per axis is computed at generation time, on weights; here its input is not one (" +
                  s.in_types[0].str() + ")");
    return "hg_dequantize(" + s.in[0] + ", " + int_str(q.zero_point[0]) + ", " + cpp_float(q.scale[0]) + ")";
  };
  d.scalar_kernels = {"quantized"};
  d.examples = {quantized_example({}, {TensorType{{4, 9}, DType::kInt8, Quantization::per_tensor(0.05f, 3)}}),
                quantized_example({}, {TensorType{{2, 7}, DType::kUInt8, Quantization::per_tensor(0.125f, 128)}})};
  return d;
}());

}  // namespace
}  // namespace hybgen
