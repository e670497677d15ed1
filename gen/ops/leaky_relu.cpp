// LeakyReLU family: leaky (slope*x below 0), prelu (a learned slope per
// channel on axis 1), elu (slope*(e^x - 1) below 0), selu (fixed lambda and
// alpha), gelu (exact erf form), rrelu (the mean slope at inference). On
// quantized data, with an output scale of its own, each but prelu is a
// lookup table (ops/quantized.h).
#include <cmath>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"

namespace hybgen {
namespace {

// SELU constants (Klambauer et al. 2017), as MXNet's leaky_relu-inl.h.
constexpr float kSeluLambda = 1.0507009873554804934193349852946f;
constexpr float kSeluAlpha = 1.6732632423543772848170429916717f;

// The formula of each type, chosen once per call rather than per element.
using Activate = float (*)(float x, float slope);
Activate activation_of(const std::string& type) {
  if (type == "leaky" || type == "prelu" || type == "rrelu")
    return [](float x, float slope) { return x > 0.0f ? x : slope * x; };
  if (type == "elu") return [](float x, float slope) { return x > 0.0f ? x : slope * std::expm1(x); };
  if (type == "selu")
    return [](float x, float) { return kSeluLambda * (x > 0.0f ? x : kSeluAlpha * std::expm1(x)); };
  return [](float x, float) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752f)); };  // gelu
}

float fixed_slope(const Attrs& a) {
  if (a.get_string("act_type") == "rrelu")
    return static_cast<float>((a.get_float("lower_bound") + a.get_float("upper_bound")) / 2);
  return static_cast<float>(a.get_float("slope"));
}

struct PreluView {
  int64_t outer, channels, inner;
};

PreluView prelu_view(const Shape& s) {
  if (s.size() < 2) return {1, s.empty() ? 1 : s[0], 1};
  return {s[0], s[1], dims_product(s, 2, s.size())};
}

std::vector<TensorType> leaky_relu_infer(const Attrs& a, const std::vector<TensorType>& in) {
  const bool prelu = a.get_string("act_type") == "prelu";
  if (prelu != (in.size() == 2)) throw Error(prelu ? "prelu needs a gamma input" : "only prelu takes a gamma input");
  if (prelu) {
    const PreluView v = prelu_view(in[0].shape);
    if (in[1].num_elements() != v.channels && in[1].num_elements() != 1)
      throw Error("gamma has shape " + shape_str(in[1].shape) + ", expected (" + std::to_string(v.channels) +
                  ",) or (1,)");
    if (!in[0].quantization.empty() || !in[1].quantization.empty())
      throw Error("prelu is computed in float; quantized data needs a dequantize first");
  }
  return {table_output(a, in[0])};
}

// One element of a type other than prelu, as the reference computes it.
ElementFunction element_function(const Attrs& a) {
  const Activate activate = activation_of(a.get_string("act_type"));
  const float slope = fixed_slope(a);
  return [activate, slope](float x) { return activate(x, slope); };
}

void leaky_relu_reference(const KernelIO& io) {
  const std::string& type = io.attrs.get_string("act_type");
  const Activate activate = activation_of(type);
  const int64_t n = io.out_types[0].num_elements();
  if (has_output_quantization(io.attrs)) return lookup_table_reference(io, element_function(io.attrs));
  if (type != "prelu") {
    const float slope = fixed_slope(io.attrs);
    for (int64_t i = 0; i < n; ++i) io.output<float>(0)[i] = activate(io.input<float>(0)[i], slope);
    return;
  }
  const PreluView v = prelu_view(io.in_types[0].shape);
  const bool shared = io.in_types[1].num_elements() == 1;
  for (int64_t o = 0; o < v.outer; ++o)
    for (int64_t c = 0; c < v.channels; ++c)
      for (int64_t i = 0; i < v.inner; ++i) {
        const int64_t k = (o * v.channels + c) * v.inner + i;
        io.output<float>(0)[k] = activate(io.input<float>(0)[k], io.input<float>(1)[shared ? 0 : c]);
      }
}

// The same formulas as activation_of(), as C++ expressions of x (and the slope
// element g for prelu); expm1 and gelu are the vectorisable approximations
// of templates/kernels/math.inc.
std::string leaky_relu_emit_scalar(const ScalarSite& site) {
  const std::string& type = site.attrs.get_string("act_type");
  const std::string& x = site.in[0];
  if (has_output_quantization(site.attrs)) return lookup_table_scalar(site, element_function(site.attrs));
  const std::string slope = type == "prelu" ? site.in[1] : cpp_float(fixed_slope(site.attrs));
  if (type == "leaky" || type == "prelu" || type == "rrelu") return x + " > 0.0f ? " + x + " : " + slope + " * " + x;
  if (type == "elu") return x + " > 0.0f ? " + x + " : " + slope + " * hg_expm1(" + x + ")";
  if (type == "selu")
    return cpp_float(kSeluLambda) + " * (" + x + " > 0.0f ? " + x + " : " + cpp_float(kSeluAlpha) + " * hg_expm1(" +
           x + "))";
  return "hg_gelu(" + x + ")";
}

// prelu's gamma is per channel on axis 1: (C,) reads as (C, 1, ..., 1).
Shape scalar_input_shape(const Attrs&, int index, const Shape& input, const Shape& output) {
  if (index == 0 || output.size() < 2 || num_elements(input) == 1) return input;
  Shape s{num_elements(input)};
  s.resize(output.size() - 1, 1);
  return s;
}

Attrs leaky(const std::string& type, double slope = 0.25) {
  Attrs a;
  a.set("act_type", type);
  a.set("slope", slope);
  return a;
}

const OpRegistrar leaky_relu_op([] {
  OpDef d;
  d.name = "LeakyReLU";
  d.summary = "leaky / prelu / elu / selu / gelu / rrelu activations";
  d.input_names = {"data", "gamma"};
  d.min_inputs = 1;
  d.max_inputs = 2;
  d.attrs = {{"act_type", AttrKind::kString, std::string("leaky"), "which function",
              {"leaky", "prelu", "elu", "selu", "gelu", "rrelu"}},
             {"slope", AttrKind::kFloat, 0.25, "negative slope (leaky) or alpha (elu)", {}},
             {"lower_bound", AttrKind::kFloat, 0.125, "rrelu lower slope", {}},
             {"upper_bound", AttrKind::kFloat, 0.334, "rrelu upper slope", {}}};
  d.attrs = with_output_quantization(d.attrs);
  d.fusion = FusionClass::kBroadcast;
  d.inplace = true;
  d.arity = [](const Attrs& a) { return a.get_string("act_type") == "prelu" ? 2 : 1; };
  d.infer = leaky_relu_infer;
  d.reference = leaky_relu_reference;
  d.emit_scalar = leaky_relu_emit_scalar;
  d.scalar_kernels = {"math"};
  d.scalar_input_shape = scalar_input_shape;
  d.weight_shapes = [](const Attrs&, const Shape& data) {
    return std::vector<Shape>{{prelu_view(data).channels}};
  };
  d.examples = {{leaky("leaky", 0.1), {{2, 11}}},
                {leaky("prelu"), {{2, 3, 2, 2}, {3}}},
                {leaky("elu", 1.0), {{5, 3}}},
                {leaky("selu"), {{7}}},
                {leaky("gelu"), {{4, 6}}},
                {leaky("rrelu"), {{9}}},
                {leaky("gelu"), {{3, 37}}},
                {leaky("elu", 0.5), {{41}}},
                // Lookup tables, int8 and uint8.
                quantized_example(with_output_quantization(leaky("gelu"), 0.02, -110),
                                  {quantized_data({3, 17}, DType::kInt8, 0.025f, 3)}),
                quantized_example(with_output_quantization(leaky("leaky", 0.1), 0.03, 40),
                                  {quantized_data({2, 11}, DType::kInt8, 0.04f, -2)}),
                quantized_example(with_output_quantization(leaky("elu", 1.0), 0.02, 100),
                                  {quantized_data({19}, DType::kUInt8, 0.03f, 120)}),
                quantized_example(with_output_quantization(leaky("selu"), 0.03, -40),
                                  {quantized_data({2, 7}, DType::kInt8, 0.03f, 0)})};
  d.reference_dtypes = d.scalar_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  return d;
}());

// The fused loop computes it; after a GEMM or convolution gelu runs on vectors.
const KernelRegistrar leaky_relu_cpp(Backend::kCpp, "LeakyReLU", [] {
  OpKernel k;
  k.vector_epilogue = [](const Attrs& a) -> std::string {
    return a.get_string("act_type") == "gelu" ? "HgGeluEpilogue()" : "";
  };
  return k;
}());

}  // namespace
}  // namespace hybgen
