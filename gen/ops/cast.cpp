// Cast (amp_cast): to an integer dtype or bool the values take that dtype
// (float to integer truncates toward zero, saturating at the type's range;
// integers narrow by wrapping; to bool: non-zero). Generated code computes in
// float32, so a Cast to float32 or float64 gives float32, and a Cast to
// float16 rounds the values to float16's precision and range (ties to even)
// while keeping them as float32, which a following Cast back to float32
// keeps: the pair gives MXNet's float16 round trip. bfloat16 is refused.
// Generated code computes the conversions between float32, int8, uint8 and
// int32 (the operands and results of ONNX's integer ops); int64 and bool
// are the references' alone.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "ir/error.h"
#include "ir/half.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

float round_to_half(float x);  // also used by the tests

namespace {

// The dtype a Cast to `dtype` (the attribute) gives.
DType target_dtype(const Attrs& a) {
  const std::string& t = a.get_string("dtype");
  if (t == "float16" || t == "float32" || t == "float64") return DType::kFloat32;
  if (t == "bfloat16") throw Error("Cast to bfloat16 is not supported: generated code computes in float32");
  const DType dtype = parse_dtype(t);
  if (is_storage_only_dtype(dtype))
    throw Error("Cast to " + t + " is not supported: generated code computes in float32");
  return dtype;
}

bool to_half(const Attrs& a) { return a.get_string("dtype") == "float16"; }

// One value of type From as type To, by the rules above.
template <class To, class From>
To convert(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != From{};
  } else if constexpr (std::is_floating_point_v<From> && !std::is_floating_point_v<To>) {
    if (std::isnan(v)) return To{};
    const double t = std::trunc(static_cast<double>(v));
    if (t <= static_cast<double>(std::numeric_limits<To>::min())) return std::numeric_limits<To>::min();
    if (t >= static_cast<double>(std::numeric_limits<To>::max())) return std::numeric_limits<To>::max();
    return static_cast<To>(t);
  } else if constexpr (!std::is_floating_point_v<From> && !std::is_floating_point_v<To>) {
    return static_cast<To>(static_cast<uint64_t>(static_cast<int64_t>(v)));  // wraps
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

float round_to_half(float x) { return std::isnan(x) ? x : half_to_float(float_to_half(x)); }

namespace {

const OpRegistrar cast_op([] {
  OpDef d;
  d.name = "Cast";
  d.aliases = {"cast", "amp_cast"};
  d.summary = "type conversion: to integers and bool their dtype; float32 passes through, float16 rounds to float16 values";
  d.input_names = {"data"};
  d.attrs = {{"dtype", AttrKind::kString, std::nullopt, "the target type",
              {"float16", "float32", "float64", "bfloat16", "uint8", "int8", "int32", "int64", "bool"}}};
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const DType to = target_dtype(a);
    if (to_half(a) && !is_float_dtype(in[0].dtype))
      throw Error("Cast of " + dtype_name(in[0].dtype) + " to float16 is not supported");
    return std::vector<TensorType>{TensorType{in[0].shape, to}};
  };
  d.reference = [](const KernelIO& io) {
    const int64_t n = io.out_types[0].num_elements();
    const DType from = io.in_types[0].dtype, to = io.out_types[0].dtype;
    if (from == DType::kFloat32 && to == DType::kFloat32) {
      const bool half = to_half(io.attrs);
      for (int64_t i = 0; i < n; ++i)
        io.output<float>(0)[i] = half ? round_to_half(io.input<float>(0)[i]) : io.input<float>(0)[i];
      return;
    }
    with_value_type(from, [&](auto in_value) {
      using From = decltype(in_value);
      with_value_type(to, [&](auto out_value) {
        using To = decltype(out_value);
        const From* x = io.input<From>(0);
        To* y = io.output<To>(0);
        for (int64_t i = 0; i < n; ++i) y[i] = convert<To>(x[i]);
      });
    });
  };
  d.reference_dtypes = float32_and_integer_dtypes();
  // Generated code: float32, int8, uint8 and int32 (what the fused loops hold), by the reference's rules.
  d.scalar_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8, DType::kInt32};
  d.emit_scalar = [](const ScalarSite& s) {
    const std::string& x = s.in[0];
    const DType from = s.in_types[0].dtype, to = s.out_type.dtype;
    if (to_half(s.attrs)) return "hg_round_half(" + x + ")";
    if (from == to) return x;
    const std::string type = dtype_c_type(to);
    if (from != DType::kFloat32) return "static_cast<" + type + ">(" + x + ")";  // to float, or wrapping
    // Toward zero, saturated, NaN to 0. The bounds compare as floats: each
    // is exact in float or rounds to where the saturation starts.
    const auto [lo, hi] = integer_dtype_range(to);
    return "(" + x + " != " + x + " ? static_cast<" + type + ">(0) : " + x +
           " <= " + cpp_float(static_cast<double>(lo)) + " ? static_cast<" + type + ">(" + int_str(lo) + ") : " + x +
           " >= " + cpp_float(static_cast<double>(hi)) + " ? static_cast<" + type + ">(" + int_str(hi) +
           ") : static_cast<" + type + ">(" + x + "))";
  };
  d.scalar_kernels = {"half"};
  d.is_identity = [](const Attrs& a) {
    const std::string& t = a.get_string("dtype");
    return t == "float32" || t == "float64";  // remove_identities also checks the dtypes agree
  };
  d.flops = [](const Attrs&, const std::vector<TensorType>&, const std::vector<TensorType>&) { return 0.0; };
  Attrs half, single;
  half.set("dtype", std::string("float16"));
  single.set("dtype", std::string("float32"));
  auto to = [](const std::string& dtype) {
    Attrs a;
    a.set("dtype", dtype);
    return a;
  };
  // Integers in generated code: saturation (the test data reaches past
  // every 8-bit range), wrapping, and int32 to float32.
  d.examples = {{half, {{3, 7}}},
                {single, {{4}}},
                {to("int8"), {{5, 9}}},
                {to("uint8"), {{2, 11}}},
                {to("int32"), {{13}}},
                {to("int8"), {{3, 8}}, {TensorType{{3, 8}, DType::kUInt8}}},
                {to("int32"), {{2, 6}}, {TensorType{{2, 6}, DType::kInt8}}},
                {single, {{4, 5}}, {TensorType{{4, 5}, DType::kInt32}}},
                {to("uint8"), {{7}}, {TensorType{{7}, DType::kInt32}}}};
  d.input_ranges = {{0, -300.0f, 300.0f}};
  return d;
}());

}  // namespace
}  // namespace hybgen
