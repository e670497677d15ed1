#include "ops/quantized.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "ir/error.h"
#include "ops/op_util.h"

namespace hybgen {
namespace kernel_text {
// The generated code's arithmetic, compiled here for the references.
#include "templates/kernels/quantized.inc"
}  // namespace kernel_text

std::vector<AttrSpec> with_output_quantization(std::vector<AttrSpec> attrs) {
  AttrSpec scale{"out_scale", AttrKind::kFloat, std::nullopt, "quantized integer output: its scale", {}};
  AttrSpec zero_point{"out_zero_point", AttrKind::kInt, std::nullopt, "quantized integer output: its zero point", {}};
  scale.optional = zero_point.optional = true;
  attrs.push_back(scale);
  attrs.push_back(zero_point);
  return attrs;
}

const std::vector<DType>& quantized_gemm_dtypes() {
  static const std::vector<DType> v{DType::kFloat32, DType::kInt8, DType::kUInt8, DType::kInt32};
  return v;
}

Attrs with_output_quantization(Attrs attrs, double scale, int64_t zero_point) {
  attrs.set("out_scale", scale);
  attrs.set("out_zero_point", zero_point);
  return attrs;
}

TensorType quantized_data(const Shape& shape, DType dtype, float scale, int64_t zero_point) {
  return TensorType{shape, dtype, Quantization::per_tensor(scale, zero_point)};
}

TensorType quantized_weight(const Shape& shape, int64_t channels) {
  if (channels == 1) return TensorType{shape, DType::kInt8, Quantization::per_tensor(0.005f, 0)};
  std::vector<float> scales;
  for (int64_t c = 0; c < channels; ++c) scales.push_back(0.002f * static_cast<float>(1 + c % 5));
  return TensorType{shape, DType::kInt8,
                    Quantization::per_axis(0, scales, std::vector<int64_t>(static_cast<std::size_t>(channels), 0))};
}

bool has_output_quantization(const Attrs& attrs) { return attrs.has("out_scale") || attrs.has("out_zero_point"); }

TensorType quantized_output(const Attrs& attrs, const TensorType& data, const Shape& shape) {
  if (data.quantization.empty()) {
    if (has_output_quantization(attrs))
      throw Error("out_scale and out_zero_point are for quantized integer inputs; the input is " + data.str());
    return TensorType{shape, data.dtype};
  }
  if (!attrs.has("out_scale"))
    throw Error("the input is quantized (" + data.str() + "): the output's scale, attribute out_scale, is missing");
  const double scale = attrs.get_float("out_scale");
  const int64_t zero_point = attrs.has("out_zero_point") ? attrs.get_int("out_zero_point") : 0;
  // A scale that is not a positive float is refused by check_quantization below.
  const float scale_f = std::isfinite(scale) && std::fabs(scale) <= 3.4e38 ? static_cast<float>(scale) : -1.0f;
  TensorType out{shape, data.dtype, Quantization::per_tensor(scale_f, zero_point)};
  check_quantization(out, "the output");
  return out;
}

Requantization requantization(double real) {
  if (!(real >= 0.0) || !std::isfinite(real))
    throw Error("requantization multiplier " + std::to_string(real) + " is not a finite non-negative number");
  if (real == 0.0) return {};
  int shift = 0;
  const double fraction = std::frexp(real, &shift);  // in [0.5, 1)
  int64_t q = static_cast<int64_t>(std::round(fraction * static_cast<double>(int64_t{1} << 31)));
  if (q == (int64_t{1} << 31)) {
    q /= 2;
    ++shift;
  }
  if (shift < -31) return {};  // below 2^-32: every product rounds to 0
  if (shift > 30)
    throw Error("requantization multiplier " + std::to_string(real) +
                " is too large (2^31 or more): the scales are inconsistent");
  return {static_cast<std::int32_t>(q), shift};
}

std::vector<Requantization> channel_requantization(float input_scale, const std::vector<float>& weight_scales,
                                                   float output_scale, int64_t channels) {
  std::vector<Requantization> out;
  out.reserve(static_cast<std::size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    const float w = weight_scales.size() == 1 ? weight_scales[0] : weight_scales.at(static_cast<std::size_t>(c));
    out.push_back(
        requantization(static_cast<double>(input_scale) * static_cast<double>(w) / static_cast<double>(output_scale)));
  }
  return out;
}

void check_float_or_quantized(const TensorType& data) {
  // float16 and bfloat16 are float32's storage under --precision fp16 / bf16 (the pass half_storage).
  const bool float_storage = data.dtype == DType::kFloat32 || is_half_dtype(data.dtype);
  if (!float_storage && data.quantization.empty())
    throw Error("the input is " + data.str() + ": this op takes float32 or quantized integers");
  if (data.quantization.axis)
    throw Error("the input is quantized per axis (" + data.str() + "); this op takes it per tensor");
}

void check_quantized_operands(const std::vector<TensorType>& in) {
  const TensorType& data = in[0];
  const bool half = data.quantization.empty() && is_half_dtype(data.dtype);
  if (!half) check_float_or_quantized(data);
  if (data.quantization.empty()) {
    for (std::size_t i = 1; i < in.size(); ++i)
      if (!in[i].quantization.empty() || in[i].dtype != data.dtype)
        throw Error(std::string(i == 1 ? "the weight" : "the bias") + " is " + in[i].str() + ", the data " +
                    data.str() + ": a float layer takes float weights, a quantized one quantized data");
    return;
  }
  if (data.dtype != DType::kInt8 && data.dtype != DType::kUInt8)
    throw Error("quantized data must be int8 or uint8, not " + dtype_name(data.dtype));
  if (data.quantization.axis) throw Error("the data is quantized per axis; quantized layers take it per tensor");
  const TensorType& weight = in[1];
  if (weight.dtype != DType::kInt8 || weight.quantization.empty())
    throw Error("the data is quantized, so the weight must be a quantized int8, not " + weight.str());
  if (weight.quantization.axis && *weight.quantization.axis != 0)
    throw Error("the weight is quantized on axis " + std::to_string(*weight.quantization.axis) +
                "; per axis it must be axis 0, its output channels");
  for (int64_t z : weight.quantization.zero_point)
    if (z != 0) throw Error("the weight's zero points must be 0 (symmetric int8), not " + std::to_string(z));
  if (in.size() > 2 && (in[2].dtype != DType::kInt32))
    throw Error("the data is quantized, so the bias must be int32 (scale: data scale x weight scale), not " +
                in[2].str());
}

std::vector<Requantization> output_requantization(const std::vector<TensorType>& in, const TensorType& out,
                                                  int64_t channels) {
  return channel_requantization(in[0].quantization.scale[0], in[1].quantization.scale, out.quantization.scale[0],
                                channels);
}

void requantize_outputs(const std::vector<TensorType>& in, const TensorType& out, const std::vector<std::int32_t>& acc,
                        int64_t outer, int64_t channels, int64_t inner, void* y) {
  const std::vector<Requantization> rq = output_requantization(in, out, channels);
  const std::pair<std::int32_t, std::int32_t> range = int32_range(out.dtype);
  const std::int32_t lo = range.first, hi = range.second;
  const auto zero_point = static_cast<std::int32_t>(out.quantization.zero_point[0]);
  with_value_type(out.dtype, [&](auto value) {
    using T = decltype(value);
    T* out_values = static_cast<T*>(y);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = 0; c < channels; ++c)
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t at = (o * channels + c) * inner + i;
          out_values[at] = static_cast<T>(
              requantize_clamp(acc[static_cast<std::size_t>(at)], rq[static_cast<std::size_t>(c)], zero_point, lo, hi));
        }
  });
}

std::string requantization_declaration(const std::vector<TensorType>& in, const TensorType& out, int64_t channels,
                                       const std::string& name) {
  std::vector<int64_t> multipliers, shifts;
  for (const Requantization& r : output_requantization(in, out, channels)) {
    multipliers.push_back(r.multiplier);
    shifts.push_back(r.shift);
  }
  const auto [lo, hi] = int32_range(out.dtype);
  return "static const std::int32_t " + name + "_multiplier[] = " + cpp_int_list(multipliers) + ";\n" +
         "static const std::int32_t " + name + "_shift[] = " + cpp_int_list(shifts) + ";\n" +
         "const HgRequantization " + name + "{" + name + "_multiplier, " + name + "_shift, " +
         std::to_string(in[0].quantization.zero_point[0]) + ", " + std::to_string(out.quantization.zero_point[0]) +
         ", " + std::to_string(lo) + ", " + std::to_string(hi) + "};\n";
}

std::vector<uint8_t> pack_q8_weights(const std::int8_t* w, int64_t n, int64_t k, int nr, int group) {
  const int64_t groups = (k + group - 1) / group, panels = (n + nr - 1) / nr;
  std::vector<uint8_t> out(static_cast<std::size_t>(panels * groups * nr * group + panels * nr * 4), 0);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t g = 0; g < groups; ++g)
      for (int64_t j = 0; j < nr; ++j)
        for (int64_t i = 0; i < group; ++i) {
          const int64_t row = p * nr + j, col = g * group + i;
          if (row < n && col < k)
            out[static_cast<std::size_t>(((p * groups + g) * nr + j) * group + i)] =
                static_cast<uint8_t>(w[row * k + col]);
        }
  uint8_t* sums = out.data() + panels * groups * nr * group;
  for (int64_t row = 0; row < n; ++row) {
    std::int32_t sum = 0;
    for (int64_t col = 0; col < k; ++col) sum += w[row * k + col];
    std::memcpy(sums + row * 4, &sum, 4);  // little-endian, as every weight file
  }
  return out;
}

Constant q8_packed_constant(const Constant& weights, int64_t n, int64_t k, int nr, int group) {
  std::vector<uint8_t> bytes =
      pack_q8_weights(reinterpret_cast<const std::int8_t*>(weights.data.data()), n, k, nr, group);
  const auto size = static_cast<int64_t>(bytes.size());
  return Constant{TensorType{{size}, DType::kInt8}, std::move(bytes)};
}

std::int32_t requantize(std::int32_t x, const Requantization& r) {
  return kernel_text::hg_requantize(x, r.multiplier, r.shift);
}

std::int32_t requantize_clamp(std::int32_t acc, const Requantization& r, std::int32_t zero_point, std::int32_t low,
                              std::int32_t high) {
  return kernel_text::hg_requantize_clamp(acc, r.multiplier, r.shift, zero_point, low, high);
}

bool requantize_wide_fits(const Requantization& r, std::int32_t zero_point) {
  return kernel_text::hg_requantize_wide_fits(r.multiplier, r.shift, zero_point);
}

std::int32_t requantize_wide(std::int32_t acc, const Requantization& r, std::int32_t zero_point) {
  const kernel_text::HgRequantizeWide w = kernel_text::hg_requantize_wide_of(r.multiplier, r.shift, zero_point);
  return kernel_text::hg_requantize_wide(acc, w.multiplier, w.high, w.shift) + w.late;
}

bool requantize_wide_late_fits(const Requantization& r, std::int32_t zero_point) {
  return kernel_text::hg_requantize_wide_late_fits(r.multiplier, r.shift, zero_point);
}

std::int32_t quantize_float(float x, float scale, std::int32_t zero_point, std::int32_t low, std::int32_t high) {
  return kernel_text::hg_quantize_float(x, scale, zero_point, low, high);
}

float dequantize_value(std::int32_t q, std::int32_t zero_point, float scale) {
  return kernel_text::hg_dequantize(q, zero_point, scale);
}

std::vector<std::int32_t> softmax_exp_table(float in_scale, double beta) {
  std::vector<std::int32_t> table(256);
  for (int d = 0; d < 256; ++d)
    table[static_cast<std::size_t>(d)] =
        static_cast<std::int32_t>(std::round(std::ldexp(std::exp(-beta * static_cast<double>(in_scale) * d), 24)));
  return table;
}

std::int32_t softmax_q30(std::int64_t e, std::int64_t sum) { return kernel_text::hg_softmax_q30(e, sum); }

Requantization softmax_output_requantization(const Quantization& out) {
  return requantization(std::ldexp(1.0, -30) / static_cast<double>(out.scale.at(0)));
}

std::pair<std::int32_t, std::int32_t> int32_range(DType dtype) {
  if (dtype == DType::kInt32) return {INT32_MIN, INT32_MAX};
  const auto [lo, hi] = integer_dtype_range(dtype);
  if (lo < INT32_MIN || hi > INT32_MAX)
    throw Error(dtype_name(dtype) + " values are not computed as quantized integers");
  return {static_cast<std::int32_t>(lo), static_cast<std::int32_t>(hi)};
}

std::int32_t quantized_bound(double x, const Quantization& q, DType dtype) {
  const auto [lo, hi] = int32_range(dtype);
  // A bound beyond float's range saturates like any other.
  const float xf = static_cast<float>(std::fmax(-3.0e38, std::fmin(3.0e38, x)));
  return quantize_float(xf, q.scale.at(0), static_cast<std::int32_t>(q.zero_point.at(0)), lo, hi);
}

QuantizedAdd quantized_add_params(const Quantization& a, const Quantization& b, const Quantization& out,
                                  std::pair<std::int32_t, std::int32_t> range) {
  const double a_scale = a.scale.at(0), b_scale = b.scale.at(0), out_scale = out.scale.at(0);
  const double twice_max = 2.0 * std::fmax(a_scale, b_scale);
  QuantizedAdd p;
  p.a_zero_point = static_cast<std::int32_t>(a.zero_point.at(0));
  p.b_zero_point = static_cast<std::int32_t>(b.zero_point.at(0));
  p.a = requantization(a_scale / twice_max);
  p.b = requantization(b_scale / twice_max);
  p.out = requantization(twice_max / (static_cast<double>(1 << 20) * out_scale));
  p.out_zero_point = static_cast<std::int32_t>(out.zero_point.at(0));
  p.low = range.first;
  p.high = range.second;
  return p;
}

namespace {
kernel_text::HgQuantizedAdd text_params(const QuantizedAdd& p) {
  return {p.a_zero_point, p.b_zero_point,   p.a.multiplier, p.b.multiplier, p.out.multiplier, p.a.shift, p.b.shift,
          p.out.shift,    p.out_zero_point, p.low,          p.high};
}
}  // namespace

std::int32_t quantized_add(std::int32_t a, std::int32_t b, const QuantizedAdd& p) {
  return kernel_text::hg_quantized_add(a, b, text_params(p));
}

std::string quantized_add_literal(const QuantizedAdd& p) {
  const auto i = [](int64_t v) { return std::to_string(v); };
  return "HgQuantizedAdd{" + i(p.a_zero_point) + ", " + i(p.b_zero_point) + ", " + i(p.a.multiplier) + ", " +
         i(p.b.multiplier) + ", " + i(p.out.multiplier) + ", " + i(p.a.shift) + ", " + i(p.b.shift) + ", " +
         i(p.out.shift) + ", " + i(p.out_zero_point) + ", " + i(p.low) + ", " + i(p.high) + "}";
}

TensorType table_output(const Attrs& attrs, const TensorType& data) {
  check_float_or_quantized(data);
  if (!data.quantization.empty() && data.dtype != DType::kInt8 && data.dtype != DType::kUInt8)
    throw Error("quantized data must be int8 or uint8 here (a lookup table of 256 values), not " + data.str());
  return quantized_output(attrs, data, data.shape);
}

TensorType table_or_same_output(const Attrs& attrs, const TensorType& data, bool plain_integers) {
  if (!data.quantization.empty() || has_output_quantization(attrs)) return table_output(attrs, data);
  if (!plain_integers && (data.dtype == DType::kInt8 || data.dtype == DType::kUInt8))
    throw Error("the input is " + data.str() + ": this op takes float32 or quantized integers");
  return data;
}

std::vector<std::int32_t> lookup_table(const TensorType& in, const TensorType& out, const ElementFunction& f) {
  const auto [lo, hi] = int32_range(in.dtype);
  const auto [out_lo, out_hi] = int32_range(out.dtype);
  const float scale = in.quantization.scale.at(0), out_scale = out.quantization.scale.at(0);
  const auto zero_point = static_cast<std::int32_t>(in.quantization.zero_point.at(0));
  const auto out_zero_point = static_cast<std::int32_t>(out.quantization.zero_point.at(0));
  std::vector<std::int32_t> table;
  table.reserve(static_cast<std::size_t>(hi - lo + 1));
  for (std::int32_t q = lo; q <= hi; ++q)
    table.push_back(
        quantize_float(f(dequantize_value(q, zero_point, scale)), out_scale, out_zero_point, out_lo, out_hi));
  return table;
}

void lookup_table_reference(const KernelIO& io, const ElementFunction& f) {
  const std::vector<std::int32_t> table = lookup_table(io.in_types[0], io.out_types[0], f);
  const std::int32_t lo = int32_range(io.in_types[0].dtype).first;
  with_value_type(io.in_types[0].dtype, [&](auto value) {
    using T = decltype(value);
    const T* x = io.input<T>(0);
    T* y = io.output<T>(0);
    for (int64_t i = 0; i < io.out_types[0].num_elements(); ++i)
      y[i] = static_cast<T>(table[static_cast<std::size_t>(static_cast<std::int32_t>(x[i]) - lo)]);
  });
}

std::string lookup_table_scalar(const ScalarSite& site, const ElementFunction& f) {
  if (!site.declarations || site.name.empty()) throw Error("a lookup table needs a place for its static array");
  const TensorType &in = site.in_types[0], &out = site.out_type;
  const std::vector<std::int32_t> table = lookup_table(in, out, f);
  const std::string name = site.name + "_table";
  std::string values;
  for (std::size_t i = 0; i < table.size(); ++i)
    values += (i % 16 == 0 ? "\n    " : " ") + std::to_string(table[i]) + (i + 1 < table.size() ? "," : "");
  *site.declarations += "// " + site.name + " = quantize(f(dequantize(x))) for every " + dtype_name(in.dtype) +
                        " x, scale " + cpp_float(in.quantization.scale[0]) + " zero point " +
                        int_str(in.quantization.zero_point[0]) + " into scale " + cpp_float(out.quantization.scale[0]) +
                        " zero point " + int_str(out.quantization.zero_point[0]) + "\n" + "static const " +
                        dtype_c_type(out.dtype) + " " + name + "[" + std::to_string(table.size()) + "] = {" + values +
                        "};\n";
  const std::int32_t lo = int32_range(in.dtype).first;
  return name + "[" + site.in[0] + (lo < 0 ? " + " + int_str(-lo) : "") + "]";
}

}  // namespace hybgen
