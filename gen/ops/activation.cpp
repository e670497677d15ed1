// Activation: relu, sigmoid, tanh, softrelu (log(1+e^x)), softsign (x/(1+|x|)).
// The frontend's F.relu / F.sigmoid / ... build this op. On quantized data
// relu keeps its input's quantization (a max with the zero point, exact);
// with an output scale of its own (out_scale), any of them is a lookup
// table (ops/quantized.h).
#include <cmath>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

// The reference, chosen once per call rather than per element; softrelu
// returns x above 20 where log1p(e^x) == x in float, as MXNet does.
using Unary = float (*)(float);
Unary function_of(const std::string& act) {
  if (act == "relu") return [](float x) { return x > 0.0f ? x : 0.0f; };
  if (act == "sigmoid") return [](float x) { return 1.0f / (1.0f + std::exp(-x)); };
  if (act == "tanh") return [](float x) { return std::tanh(x); };
  if (act == "softrelu") return [](float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); };
  return [](float x) { return x / (1.0f + std::fabs(x)); };  // softsign
}

template <typename F>
void apply_all(F f, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

void activation_reference(const KernelIO& io) {
  const std::string& act = io.attrs.get_string("act_type");
  if (has_output_quantization(io.attrs)) return lookup_table_reference(io, function_of(act));
  if (!io.in_types[0].quantization.empty()) {  // relu: the zero point is the real 0
    with_value_type(io.in_types[0].dtype, [&](auto value) {
      using T = decltype(value);
      const auto zero = static_cast<T>(io.in_types[0].quantization.zero_point[0]);
      for (int64_t i = 0; i < io.out_types[0].num_elements(); ++i)
        io.output<T>(0)[i] = io.input<T>(0)[i] > zero ? io.input<T>(0)[i] : zero;
    });
    return;
  }
  const int64_t n = io.out_types[0].num_elements();
  if (act == "relu")  // the common case inlined, so the loop vectorises
    apply_all([](float x) { return x > 0.0f ? x : 0.0f; }, io.input<float>(0), io.output<float>(0), n);
  else
    apply_all(function_of(act), io.input<float>(0), io.output<float>(0), n);
}

// The same formulas as function_of(), as C++ expressions of x; sigmoid and tanh
// are the vectorisable approximations of templates/kernels/math.inc.
std::string activation_emit_scalar(const ScalarSite& site) {
  const std::string& act = site.attrs.get_string("act_type");
  const std::string& x = site.in[0];
  if (has_output_quantization(site.attrs)) return lookup_table_scalar(site, function_of(act));
  if (!site.in_types[0].quantization.empty()) {
    const std::string zero = "static_cast<" + dtype_c_type(site.in_types[0].dtype) + ">(" +
                             int_str(site.in_types[0].quantization.zero_point[0]) + ")";
    return x + " > " + zero + " ? " + x + " : " + zero;
  }
  if (act == "relu") return x + " > 0.0f ? " + x + " : 0.0f";
  if (act == "sigmoid") return "hg_sigmoid(" + x + ")";
  if (act == "tanh") return "hg_tanh(" + x + ")";
  if (act == "softrelu") return x + " > 20.0f ? " + x + " : std::log1p(std::exp(" + x + "))";
  return x + " / (1.0f + std::fabs(" + x + "))";  // softsign
}

Attrs act(const std::string& type) {
  Attrs a;
  a.set("act_type", type);
  return a;
}

OpRegistrar activation_op([] {
  OpDef d;
  d.name = "Activation";
  d.summary = "elementwise activation function";
  d.input_names = {"data"};
  d.attrs = {{"act_type", AttrKind::kString, std::nullopt, "which function",
              {"relu", "sigmoid", "tanh", "softrelu", "softsign"}}};
  d.attrs = with_output_quantization(d.attrs);
  d.fusion = FusionClass::kElementwise;
  d.inplace = true;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    check_float_or_quantized(in[0]);
    // On quantized data relu is exact (a max with the zero point); the others need a scale of their own.
    if (!in[0].quantization.empty() && a.get_string("act_type") == "relu" && !has_output_quantization(a))
      return std::vector<TensorType>{in[0]};
    return std::vector<TensorType>{table_output(a, in[0])};
  };
  // A quantized relu whose zero point is its dtype's lowest value (TFLite's
  // int8 relu after a convolution, zero point -128) leaves every value as it is.
  d.is_identity_on = [](const Attrs& a, const TensorType& in) {
    return a.get_string("act_type") == "relu" && !has_output_quantization(a) &&
           in.quantization.zero_point.size() == 1 && is_integer_dtype(in.dtype) &&
           in.quantization.zero_point[0] == integer_dtype_range(in.dtype).first;
  };
  d.reference = activation_reference;
  d.reference_dtypes = d.scalar_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  d.emit_scalar = activation_emit_scalar;
  d.scalar_kernels = {"math"};
  d.flops = [](const Attrs& a, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    // relu is one compare; the others cost an exp or a division, counted as 4.
    const double per = a.get_string("act_type") == "relu" ? 1.0 : 4.0;
    return per * static_cast<double>(out[0].num_elements());
  };
  d.examples = {{act("relu"), {{2, 37}}},
                {act("sigmoid"), {{3, 5, 7}}},
                {act("tanh"), {{1}}},
                {act("softrelu"), {{4, 9}}},
                {act("softsign"), {{17}}},
                {act("tanh"), {{2, 41}}},
                quantized_example(act("relu"), {quantized_data({2, 37}, DType::kInt8, 0.05f, -7)}),
                quantized_example(act("relu"), {quantized_data({3, 11}, DType::kUInt8, 0.02f, 100)}),
                // Lookup tables: each function, int8 and uint8, a relu requantized to a scale of its own.
                quantized_example(with_output_quantization(act("sigmoid"), 1.0 / 256, -128),
                                  {quantized_data({3, 21}, DType::kInt8, 0.06f, 5)}),
                quantized_example(with_output_quantization(act("tanh"), 1.0 / 128, 0),
                                  {quantized_data({2, 19}, DType::kInt8, 0.03f, -10)}),
                quantized_example(with_output_quantization(act("softrelu"), 0.04, 10),
                                  {quantized_data({17}, DType::kUInt8, 0.05f, 128)}),
                quantized_example(with_output_quantization(act("softsign"), 0.008, 3),
                                  {quantized_data({4, 9}, DType::kInt8, 0.1f, 0)}),
                quantized_example(with_output_quantization(act("relu"), 0.02, -128),
                                  {quantized_data({2, 13}, DType::kInt8, 0.03f, 20)})};
  return d;
}());

// The fused loop computes it; after a GEMM or convolution relu runs on vectors.
const KernelRegistrar activation_cpp(Backend::kCpp, "Activation", [] {
  OpKernel k;
  k.vector_epilogue = [](const Attrs& a) -> std::string {
    return a.get_string("act_type") == "relu" ? "HgReluEpilogue()" : "";
  };
  return k;
}());

}  // namespace
}  // namespace hybgen
