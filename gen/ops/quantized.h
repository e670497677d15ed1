// Integer quantization as the ops use it (docs/quantization.md): TFLite's
// scheme. A quantized value q stands for scale * (q - zero_point) (the
// Quantization on its TensorType). Ops whose integer output has a scale of
// its own (a convolution, an add) take it as the attributes out_scale and
// out_zero_point; ops that only move or compare values (max pooling,
// reshape, relu) keep their input's.
//
//   d.attrs = with_output_quantization({...});             // an op's schema
//   TensorType out = quantized_output(attrs, in[0], "...");  // its infer
//   Requantization r = requantization(in_scale * w_scale[c] / out_scale);
//   int8_t y = static_cast<int8_t>(requantize_clamp(acc, r, zero_point, -128, 127));
//
// The integer arithmetic is templates/kernels/quantized.inc, compiled here
// and in generated code alike.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "ir/tensor_type.h"
#include "ops/op.h"

namespace hybgen {

// `attrs` with out_scale (float) and out_zero_point (int) appended, both
// optional: absent on a float node.
std::vector<AttrSpec> with_output_quantization(std::vector<AttrSpec> attrs);
// True when the node's attributes give its output a quantization.
bool has_output_quantization(const Attrs& attrs);
// The output type of an op with attributes out_scale/out_zero_point whose
// output is `data`'s dtype: for a quantized integer `data`, of shape `shape`
// and quantized per tensor by those attributes (Error naming what is
// missing or wrong); for float data the attributes must be absent.
TensorType quantized_output(const Attrs& attrs, const TensorType& data, const Shape& shape);

// A real multiplier as TFLite stores it: multiplier * 2^(shift - 31), the
// multiplier a Q31 in [2^30, 2^31) (0 for a multiplier of 0).
struct Requantization {
  std::int32_t multiplier = 0;
  int shift = 0;
};
// TFLite's QuantizeMultiplier: the nearest such pair to `real` (>= 0).
// Error for a multiplier too large to represent (2^31 and above).
Requantization requantization(double real);
// Per output channel c: input_scale * weight_scale[c] / output_scale in
// double, as TFLite computes it; one weight scale serves every channel.
std::vector<Requantization> channel_requantization(float input_scale, const std::vector<float>& weight_scales,
                                                   float output_scale, int64_t channels);

// A convolution's or dense layer's inputs (data, weight, optional bias)
// when the data is a quantized integer: the data int8 or uint8 per tensor;
// the weight int8, symmetric (zero points 0), per tensor or per axis on
// axis 0 (its output channels); the bias int32. Error naming what is wrong.
// Float data (float32, or float16 / bfloat16 as the pass half_storage
// stores it): the weight and bias of its dtype, not quantized.
void check_quantized_operands(const std::vector<TensorType>& in);
// Error unless `data` is float32 (or its half storage, float16 / bfloat16)
// or an integer quantized per tensor: what
// ops with a float and a quantized form take (an unquantized int8 has no
// meaning there; a per-axis one is a weight's).
void check_float_or_quantized(const TensorType& data);
// Its per-output-channel requantization into `out`.
std::vector<Requantization> output_requantization(const std::vector<TensorType>& in, const TensorType& out,
                                                  int64_t channels);
// Its accumulators to outputs in the reference: `acc` (channels x inner,
// channel-major blocks of `inner` elements, `outer` times) requantized
// into y, of the output's C type.
void requantize_outputs(const std::vector<TensorType>& in, const TensorType& out, const std::vector<std::int32_t>& acc,
                        int64_t outer, int64_t channels, int64_t inner, void* y);
// Generated code: statements declaring `name`, an HgRequantization
// (templates/kernels/quantized.inc) over static tables of the multipliers
// and shifts, for a kernel call that follows.
std::string requantization_declaration(const std::vector<TensorType>& in, const TensorType& out, int64_t channels,
                                       const std::string& name);

// The int8 weights `w`, n rows (output channels) of k, in
// templates/kernels/gemm_q8.inc's layout for panels of `nr` channels: the
// panels, then each channel's int32 weight sum.
std::vector<uint8_t> pack_q8_weights(const std::int8_t* w, int64_t n, int64_t k, int nr, int group = 4);
// OpKernel::pack_constant's result for such weights: a 1-D int8 constant of the packed bytes.
Constant q8_packed_constant(const Constant& weights, int64_t n, int64_t k, int nr, int group = 4);

// The integer arithmetic of templates/kernels/quantized.inc.
std::int32_t requantize(std::int32_t x, const Requantization& r);
std::int32_t requantize_clamp(std::int32_t acc, const Requantization& r, std::int32_t zero_point, std::int32_t low,
                              std::int32_t high);
std::int32_t quantize_float(float x, float scale, std::int32_t zero_point, std::int32_t low, std::int32_t high);
float dequantize_value(std::int32_t q, std::int32_t zero_point, float scale);
// requantize(acc, r) + zero_point in one 64-bit multiply-add (the
// Cortex-M4's kernels), where requantize_wide_fits says it may.
bool requantize_wide_fits(const Requantization& r, std::int32_t zero_point);
std::int32_t requantize_wide(std::int32_t acc, const Requantization& r, std::int32_t zero_point);
// Where the kernel adds HgRequantizeWide::late after the shift (the Cortex-M4's GEMM): right shifts to 31 and
// a multiplier of 0 as well (requantize_wide adds it).
bool requantize_wide_late_fits(const Requantization& r, std::int32_t zero_point);

// TFLite's int8 ADD of a (scale a_scale) and b into out_scale: the
// multipliers and shifts of templates/kernels/quantized.inc's HgQuantizedAdd.
struct QuantizedAdd {
  std::int32_t a_zero_point, b_zero_point;
  Requantization a, b, out;
  std::int32_t out_zero_point, low, high;
};
QuantizedAdd quantized_add_params(const Quantization& a, const Quantization& b, const Quantization& out,
                                  std::pair<std::int32_t, std::int32_t> range);
std::int32_t quantized_add(std::int32_t a, std::int32_t b, const QuantizedAdd& p);
// The HgQuantizedAdd literal of `p` for generated code.
std::string quantized_add_literal(const QuantizedAdd& p);

// What the quantized convolution and dense kernels compute: float32, int8
// and uint8 data, int8 weights, int32 bias.
const std::vector<DType>& quantized_gemm_dtypes();

// For op examples (OpDef::examples): `attrs` with out_scale and
// out_zero_point; data of `dtype` quantized per tensor; an int8 weight
// symmetric per axis 0 over `channels` scales (one: per tensor).
Attrs with_output_quantization(Attrs attrs, double scale, int64_t zero_point);
TensorType quantized_data(const Shape& shape, DType dtype, float scale, int64_t zero_point);
TensorType quantized_weight(const Shape& shape, int64_t channels);

// Elementwise functions of one quantized input (sigmoid, exp, GELU, ...) by
// a lookup table over every value of its dtype (256 for int8 and uint8),
// computed here at generation time: entry q - low is
// quantize_float(f(dequantize_value(q))) in the output's quantization, so
// the int8 op is exact to the rounding of quantize(f(x)). The reference
// (lookup_table_reference) and generated code (lookup_table_scalar, the
// table as a static const array) read this one table, so they cannot
// differ, and no target evaluates f.
//
//   d.infer: return {table_output(attrs, in[0])};   // out_scale, out_zero_point required on int8
//   d.reference: if quantized, lookup_table_reference(io, f);
//   d.emit_scalar: if quantized, return lookup_table_scalar(site, f);
using ElementFunction = std::function<float(float)>;
// The output type of such an op on `data`: quantized_output over an int8 or
// uint8 input per tensor (Error naming what else it is); float data as is.
TensorType table_output(const Attrs& attrs, const TensorType& data);
// The same for ops that also take unquantized values of other dtypes as
// they are (their reference or check_kernels says which it computes):
// plain int8 and uint8, which a table op's reference would read as
// quantized, are refused unless `plain_integers` (the op computes integers).
TensorType table_or_same_output(const Attrs& attrs, const TensorType& data, bool plain_integers);
// The table of `f` from `in` (int8 or uint8, per tensor) to `out`.
std::vector<std::int32_t> lookup_table(const TensorType& in, const TensorType& out, const ElementFunction& f);
// io.out[0][i] = table[io.in[0][i] - low].
void lookup_table_reference(const KernelIO& io, const ElementFunction& f);
// `NAME_table[x - low]`, the table declared through site.declarations.
std::string lookup_table_scalar(const ScalarSite& site, const ElementFunction& f);

// int8 softmax (templates/kernels/softmax_q8.inc): its exp table, 256
// entries round(2^24 exp(-beta * in_scale * d)) at d = max - x = 0..255,
// computed here in double; a probability as a Q30 (hg_softmax_q30); and
// the requantization of a Q30 into the output's scale (2^-30 / out_scale).
std::vector<std::int32_t> softmax_exp_table(float in_scale, double beta);
std::int32_t softmax_q30(std::int64_t e, std::int64_t sum);
Requantization softmax_output_requantization(const Quantization& out);

// The dtype range of an integer dtype as int32 (int8: -128, 127).
std::pair<std::int32_t, std::int32_t> int32_range(DType dtype);
// The quantized value of the real `x` under a per-tensor quantization of
// `dtype`, rounded as quantize_float: where relu's 0 and clip's bounds lie.
std::int32_t quantized_bound(double x, const Quantization& q, DType dtype);

}  // namespace hybgen
