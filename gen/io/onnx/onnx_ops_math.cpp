// ONNX converters of elementwise math, comparisons, normalizations and
// MatMul's numpy broadcasting, onto registry ops: Erf, Pow, Where,
// Equal/Less/Greater/LessOrEqual/GreaterOrEqual, Not/And/Or/Xor (0/1 floats
// declared BOOL), Cast (to float: none; to float16: rounded; to integers:
// truncated; to bool: != 0), HardSigmoid, HardSwish, Mish, Gelu, PRelu,
// ThresholdedRelu, Shrink, Celu, Trilu,
// Mean, LayerNormalization (over every axis from `axis`), InstanceNormalization,
// LRN (odd sizes), and MatMul with 1-D operands or broadcast batch axes
// (onnx_matmul_broadcast, which onnx-core's MatMul calls for those).
#include <cmath>
#include <string>
#include <vector>

#include "io/onnx/onnx_matmul.h"
#include "io/onnx/onnx_ops.h"
#include "ir/error.h"

namespace hybgen {
namespace {

using onnx_util::normalize_axis;
using onnx_util::attrs_of;
using onnx_util::int_list;
using onnx_util::reshape;

// Registers a converter that maps an ONNX op with N inputs onto one registry op.
void simple(const char* onnx_op, const char* op, DType out_dtype = DType::kFloat32) {
  static std::vector<OnnxConverterRegistrar> regs;
  regs.emplace_back(OnnxConverter(onnx_op).converts([op = std::string(op), out_dtype](OnnxContext& c) {
    std::vector<std::string> in;
    for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.input(i));
    c.set_output(0, c.add_node(op, {}, in), out_dtype);
  }));
}

const int simple_regs = [] {
  simple("Erf", "erf");
  simple("Equal", "broadcast_equal", DType::kBool);
  simple("Less", "broadcast_lesser", DType::kBool);
  simple("Greater", "broadcast_greater", DType::kBool);
  simple("LessOrEqual", "broadcast_lesser_equal", DType::kBool);
  simple("GreaterOrEqual", "broadcast_greater_equal", DType::kBool);
  simple("Not", "logical_not", DType::kBool);
  simple("And", "broadcast_logical_and", DType::kBool);
  simple("Or", "broadcast_logical_or", DType::kBool);
  simple("Xor", "broadcast_logical_xor", DType::kBool);
  simple("Floor", "floor");
  simple("Ceil", "ceil");
  simple("Sin", "sin");
  simple("Cos", "cos");
  simple("Sign", "sign");
  simple("Tan", "tan");
  simple("Atan", "arctan");
  simple("Sinh", "sinh");
  simple("Cosh", "cosh");
  simple("Asinh", "arcsinh");
  simple("Asin", "arcsin");
  simple("Acos", "arccos");
  simple("Acosh", "arccosh");
  simple("Atanh", "arctanh");
  return 0;
}();

// Where: the registry's where takes x and y of one shape; the three inputs
// broadcast (numpy) to it first where they differ.
const OnnxConverterRegistrar where_reg(OnnxConverter("Where").converts([](OnnxContext& c) {
  Shape out = onnx_util::broadcast_shapes(c.shape(0), c.shape(1), c.where());
  out = onnx_util::broadcast_shapes(out, c.shape(2), c.where());
  std::vector<std::string> in;
  for (int i = 0; i < 3; ++i) {
    std::string v = c.input(i);
    const Shape s = c.shape(i);
    if (s != out) {
      Shape padded(out.size() - s.size(), 1);
      padded.insert(padded.end(), s.begin(), s.end());
      v = reshape(c, v, padded, "rank" + std::to_string(i));
      v = c.add_node("broadcast_to", attrs_of("shape", out), {v}, "broadcast" + std::to_string(i));
    }
    in.push_back(v);
  }
  c.set_output(0, c.add_node("where", {}, in, "where"), c.dtype(1));
}));

// Pow: a constant scalar exponent becomes _power_scalar (2: square), else broadcast_power.
const OnnxConverterRegistrar pow_reg(OnnxConverter("Pow").converts([](OnnxContext& c) {
  if (c.is_constant(1) && c.constant(1).size() == 1 && c.shape(1).size() <= c.shape(0).size()) {
    const double e = c.constant(1).at_double(0);
    if (e == 2.0) return c.set_output(0, c.add_node("square", {}, {c.input(0)}));
    if (e == 1.0) return c.set_output(0, c.add_node("identity", {}, {c.input(0)}));
    Attrs a;
    a.set("scalar", e);
    a.set("is_int", false);
    return c.set_output(0, c.add_node("_power_scalar", a, {c.input(0)}));
  }
  c.set_output(0, c.add_node("broadcast_power", {}, {c.input(0), c.input(1)}));
}));

// Cast. At import the values keep their dtypes and the registry's Cast
// converts them (a float to bool is non-zero, an int64 to int32 wraps); the
// declared dtype then rounds float results to float16's precision and wraps
// integers to int16's or uint32's width. The references hold every dtype
// without loss but float64, which they compute as float32: a Cast from or to
// float64 is the constant's own (OnnxConst::cast, in double), so an int64
// past 2^24 cast to DOUBLE and back stays itself.
// At run time values are float32 and integers are held as floats.
const OnnxConverterRegistrar cast_reg(OnnxConverter("Cast")
    .converts([](OnnxContext& c) {
      const DType to = c.attr_dtype("to");
      const DType from = c.dtype(0);
      if (c.at_import()) {
        if (from == DType::kFloat64 || to == DType::kFloat64) {
          try {
            return c.set_constant(0, c.constant(0).cast(to));
          } catch (const OnnxFoldTooLarge&) {
            throw;
          } catch (const Error&) {
            // NaN or a value past int64 to an integer: the reference's saturation below.
          }
        }
        const DType target = fold_dtype(to);
        const std::string x = c.input(0);
        if (c.type(x).dtype == target) return c.set_output(0, x, to);
        return c.set_output(0, c.add_node("Cast", attrs_of("dtype", dtype_name(target)), {x}), to);
      }
      if (to == DType::kFloat32 || to == DType::kFloat64) return c.set_output(0, c.input(0), DType::kFloat32);
      if (to == DType::kFloat16)
        return c.set_output(0, c.add_node("Cast", attrs_of("dtype", std::string("float16")), {c.input(0)}),
                            DType::kFloat32);
      if (to == DType::kBool) {
        if (from == DType::kBool) return c.set_output(0, c.input(0), to);
        return c.set_output(0, c.add_node("_not_equal_scalar", attrs_of("scalar", 0.0), {c.input(0)}), to);
      }
      if (!is_float_dtype(to)) {
        // Integer values are held as floats: exact up to 2^24.
        if (!is_float_dtype(from)) return c.set_output(0, c.input(0), to);
        return c.set_output(0, c.add_node("trunc", {}, {c.input(0)}), to);
      }
      c.fail("Cast to " + dtype_name(to) + " is not supported");
    })
    .handles({"to", "saturate"})
    .checks([](OnnxCheck& k) {
      // attr_dtype refuses the element types no DType holds (STRING, FLOAT8 ...).
      if (k.attr_dtype("to", DType::kFloat32) == DType::kBFloat16)
        k.refuse("to", "casting to BFLOAT16 is not supported");
    }));

// HardSigmoid: clip(alpha * x + beta, 0, 1).
std::string hard_sigmoid(OnnxContext& c, const std::string& x, double alpha, double beta) {
  const std::string ax = c.add_node("_mul_scalar", attrs_of("scalar", alpha), {x}, "alpha");
  const std::string b = c.add_node("_plus_scalar", attrs_of("scalar", beta), {ax}, "beta");
  Attrs clip;
  clip.set("a_min", 0.0);
  clip.set("a_max", 1.0);
  return c.add_node("clip", clip, {b}, "clip");
}

const OnnxConverterRegistrar hard_sigmoid_reg(OnnxConverter("HardSigmoid")
    .converts([](OnnxContext& c) {
      c.set_output(0, hard_sigmoid(c, c.input(0), c.attr_float("alpha", 0.2), c.attr_float("beta", 0.5)));
    })
    .handles({"alpha", "beta"}));

const OnnxConverterRegistrar hard_swish_reg(OnnxConverter("HardSwish").converts([](OnnxContext& c) {
  const std::string x = c.input(0);
  c.set_output(0, c.add_node("broadcast_mul", {}, {x, hard_sigmoid(c, x, 1.0 / 6.0, 0.5)}, "mul"));
}));

// Mish: x * tanh(softplus(x)).
const OnnxConverterRegistrar mish_reg(OnnxConverter("Mish").converts([](OnnxContext& c) {
  const std::string x = c.input(0);
  const std::string sp = c.add_node("Activation", attrs_of("act_type", std::string("softrelu")), {x}, "softplus");
  const std::string t = c.add_node("Activation", attrs_of("act_type", std::string("tanh")), {sp}, "tanh");
  c.set_output(0, c.add_node("broadcast_mul", {}, {x, t}, "mul"));
}));

const OnnxConverterRegistrar gelu_reg(OnnxConverter("Gelu")
    .converts([](OnnxContext& c) {
      c.attr_string("approximate", "none");
      c.set_output(0, c.add_node("LeakyReLU", attrs_of("act_type", std::string("gelu")), {c.input(0)}));
    })
    .handles({"approximate"})
    .checks([](OnnxCheck& k) {
      if (k.attr_string("approximate", "none") != "none") k.refuse("approximate", "only the exact (erf) form is supported");
    }));

// PRelu: slope broadcast to x (unidirectionally): relu(x) + slope * min(x, 0).
const OnnxConverterRegistrar prelu_reg(OnnxConverter("PRelu").converts([](OnnxContext& c) {
  const Shape x = c.shape(0), s = c.shape(1);
  if (onnx_util::broadcast_shapes(x, s, c.where() + ": slope") != x)
    c.fail("slope " + shape_str(s) + " does not broadcast to the input " + shape_str(x));
  const std::string in = c.input(0);
  const std::string pos = c.add_node("Activation", attrs_of("act_type", std::string("relu")), {in}, "relu");
  const std::string neg = c.add_node("_minimum_scalar", attrs_of("scalar", 0.0), {in}, "neg");
  const std::string scaled = c.add_node("broadcast_mul", {}, {neg, c.input(1)}, "slope");
  c.set_output(0, c.add_node("broadcast_add", {}, {pos, scaled}, "add"));
}));

// ThresholdedRelu: x where x > alpha, else 0.
const OnnxConverterRegistrar thresholded_relu_reg(OnnxConverter("ThresholdedRelu")
    .converts([](OnnxContext& c) {
      const std::string x = c.input(0);
      const std::string above = c.add_node("_greater_scalar", attrs_of("scalar", c.attr_float("alpha", 1.0)), {x}, "above");
      const std::string zero = c.add_node("zeros_like", {}, {x}, "zero");
      c.set_output(0, c.add_node("where", {}, {above, x, zero}, "where"));
    })
    .handles({"alpha"}));

// Shrink: x + bias below -lambd, x - bias above lambd, else 0.
const OnnxConverterRegistrar shrink_reg(OnnxConverter("Shrink")
    .converts([](OnnxContext& c) {
      const double lambd = c.attr_float("lambd", 0.5), bias = c.attr_float("bias", 0.0);
      const std::string x = c.input(0);
      const std::string below = c.add_node("_lesser_scalar", attrs_of("scalar", -lambd), {x}, "below");
      const std::string above = c.add_node("_greater_scalar", attrs_of("scalar", lambd), {x}, "above");
      const std::string plus = c.add_node("_plus_scalar", attrs_of("scalar", bias), {x}, "plus");
      const std::string minus = c.add_node("_minus_scalar", attrs_of("scalar", bias), {x}, "minus");
      const std::string zero = c.add_node("zeros_like", {}, {x}, "zero");
      const std::string upper = c.add_node("where", {}, {above, minus, zero}, "upper");
      c.set_output(0, c.add_node("where", {}, {below, plus, upper}, "where"));
    })
    .handles({"lambd", "bias"}));

// Celu: max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
const OnnxConverterRegistrar celu_reg(OnnxConverter("Celu")
    .converts([](OnnxContext& c) {
      const double alpha = c.attr_float("alpha", 1.0);
      if (alpha == 0.0) c.fail("alpha must not be 0");
      const std::string x = c.input(0);
      const std::string pos = c.add_node("Activation", attrs_of("act_type", std::string("relu")), {x}, "relu");
      const std::string e = c.add_node("exp", {}, {c.add_node("_div_scalar", attrs_of("scalar", alpha), {x}, "scale")}, "exp");
      const std::string em1 = c.add_node("_minus_scalar", attrs_of("scalar", 1.0), {e}, "minus1");
      const std::string neg =
          c.add_node("_minimum_scalar", attrs_of("scalar", 0.0), {c.add_node("_mul_scalar", attrs_of("scalar", alpha), {em1}, "alpha")}, "neg");
      c.set_output(0, c.add_node("broadcast_add", {}, {pos, neg}, "add"));
    })
    .handles({"alpha"}));

// Trilu: the upper (j - i >= k) or lower (j - i <= k) triangle of the last
// two axes, the rest 0: where over a constant mask.
const OnnxConverterRegistrar trilu_reg(OnnxConverter("Trilu")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      if (x.size() < 2) c.fail("input " + shape_str(x) + " needs at least 2 axes");
      int64_t k = 0;
      if (c.has_input(1)) {
        const OnnxConst& kc = c.constant(1);
        if (kc.size() != 1) c.fail("k must be a scalar");
        k = kc.at_int(0);
      }
      const bool upper = c.attr_int("upper", 1) != 0;
      const int64_t rows = x[x.size() - 2], cols = x.back();
      if (rows > (int64_t{1} << 24) / cols) c.fail("the mask of " + shape_str(x) + " would be too large");
      std::vector<float> mask(static_cast<std::size_t>(rows * cols));
      for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
          // j - i compared with k, without overflow for a hostile k.
          const int64_t d = j - i;
          mask[static_cast<std::size_t>(i * cols + j)] = (upper ? d >= k : d <= k) ? 1.0f : 0.0f;
        }
      std::string m = c.add_constant({rows, cols}, mask, "mask");
      if (x.size() > 2) {
        Shape padded(x.size() - 2, 1);
        padded.push_back(rows), padded.push_back(cols);
        m = c.add_node("broadcast_to", attrs_of("shape", x), {reshape(c, m, padded, "mask_rank")}, "mask_broadcast");
      }
      const std::string in = c.input(0);
      c.set_output(0, c.add_node("where", {}, {m, in, c.add_node("zeros_like", {}, {in}, "zero")}, "where"));
    })
    .handles({"upper"}));

// Mean of n inputs: their sum over n.
const OnnxConverterRegistrar mean_reg(OnnxConverter("Mean").converts([](OnnxContext& c) {
  if (c.num_inputs() < 1) c.fail("needs at least 1 input");
  std::string acc = c.input(0);
  for (int i = 1; i < c.num_inputs(); ++i) acc = c.add_node("broadcast_add", {}, {acc, c.input(i)}, std::to_string(i));
  if (c.num_inputs() == 1) return c.set_output(0, c.add_node("identity", {}, {acc}));
  c.set_output(0, c.add_node("_div_scalar", attrs_of("scalar", static_cast<double>(c.num_inputs())), {acc}, "mean"));
}));

// A per-channel (or per-normalized-element) parameter of `n` values: the
// input broadcast to `shape` and flattened, or `fill` when absent.
std::string flat_param(OnnxContext& c, int i, const Shape& shape, int64_t n, float fill, const std::string& what) {
  if (!c.has_input(i) && n > (int64_t{1} << 26)) c.fail(what + ": " + std::to_string(n) + " values are too many");
  if (!c.has_input(i)) return c.add_constant({n}, std::vector<float>(static_cast<std::size_t>(n), fill), what);
  const Shape s = c.shape(i);
  if (onnx_util::broadcast_shapes(shape, s, c.where() + ": " + what) != shape)
    c.fail(what + " " + shape_str(s) + " does not broadcast to " + shape_str(shape));
  std::string v = c.input(i);
  if (num_elements(s) == n) return reshape(c, v, {n}, what + "_flat");
  if (s.size() < shape.size()) {
    Shape padded(shape.size() - s.size(), 1);
    padded.insert(padded.end(), s.begin(), s.end());
    v = reshape(c, v, padded, what + "_rank");
  }
  v = c.add_node("broadcast_to", attrs_of("shape", shape), {v}, what + "_broadcast");
  return reshape(c, v, {n}, what + "_flat");
}

// LayerNormalization (opset 17): normalizes over every axis from `axis` to
// the end; as LayerNorm over the last axis of the input seen as (outer, n).
const OnnxConverterRegistrar layer_norm_reg(OnnxConverter("LayerNormalization")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      const int64_t rank = static_cast<int64_t>(x.size());
      const int64_t axis = normalize_axis(c.attr_int("axis", -1), rank, "LayerNormalization axis");
      const Shape inner(x.begin() + axis, x.end());
      const int64_t n = num_elements(inner), outer = num_elements(x) / n;
      const std::string gamma = flat_param(c, 1, inner, n, 1.0f, "scale");
      const std::string beta = flat_param(c, 2, inner, n, 0.0f, "bias");
      Attrs a;
      a.set("axis", int64_t{-1});
      a.set("eps", c.attr_float("epsilon", 1e-5));
      const std::string flat = axis == rank - 1 ? c.input(0) : reshape(c, c.input(0), {outer, n}, "flatten");
      const std::string y = c.add_node("LayerNorm", a, {flat, gamma, beta}, "layer_norm");
      c.set_output(0, reshape(c, y, x, "unflatten"));
      if (c.has_output(1) || c.has_output(2)) {
        // Mean and 1 / sqrt(variance + epsilon) over the normalized axes, kept as 1s.
        Shape stat(x.begin(), x.begin() + axis);
        stat.resize(x.size(), 1);
        const std::string rows = reshape(c, c.input(0), {outer, n}, "rows");
        Attrs m;
        m.set("axis", std::vector<int64_t>{1});
        m.set("keepdims", true);
        const std::string mean = c.add_node("mean", m, {rows}, "mean");
        const std::string centered = c.add_node("broadcast_sub", {}, {rows, mean}, "centered");
        const std::string sq = c.add_node("square", {}, {centered}, "square");
        const std::string var = c.add_node("mean", m, {sq}, "variance");
        const std::string eps = c.add_node("_plus_scalar", attrs_of("scalar", c.attr_float("epsilon", 1e-5)), {var}, "eps");
        const std::string inv = c.add_node("rsqrt", {}, {eps}, "inv_std");
        if (c.has_output(1)) c.set_output(1, reshape(c, mean, stat, "mean_shape"));
        if (c.has_output(2)) c.set_output(2, reshape(c, inv, stat, "inv_std_shape"));
      }
    })
    .handles({"axis", "epsilon"})
    .ignores({"stash_type"}));

const OnnxConverterRegistrar instance_norm_reg(OnnxConverter("InstanceNormalization")
    .converts([](OnnxContext& c) {
      const Shape x = c.shape(0);
      if (x.size() < 3) c.fail("input " + shape_str(x) + " needs spatial axes (N, C, ...)");
      Attrs a;
      a.set("eps", c.attr_float("epsilon", 1e-5));
      const std::string gamma = reshape(c, c.input(1), {x[1]}, "scale");
      const std::string beta = reshape(c, c.input(2), {x[1]}, "bias");
      c.set_output(0, c.add_node("InstanceNorm", a, {c.input(0), gamma, beta}, "instance_norm"));
    })
    .handles({"epsilon"}));

// LRN: ONNX's window [c - (size-1)/2, c + ceil((size-1)/2)] is MXNet's for odd sizes.
const OnnxConverterRegistrar lrn_reg(OnnxConverter("LRN")
    .converts([](OnnxContext& c) {
      Attrs a;
      a.set("nsize", c.attr_int("size"));
      a.set("alpha", c.attr_float("alpha", 1e-4));
      a.set("beta", c.attr_float("beta", 0.75));
      a.set("knorm", c.attr_float("bias", 1.0));
      c.set_output(0, c.add_node("LRN", a, {c.input(0)}));
    })
    .handles({"size", "alpha", "beta", "bias"})
    .checks([](OnnxCheck& k) {
      if (k.attr_int("size", 1) % 2 == 0) k.refuse("size", "only odd window sizes are supported");
    }));

}  // namespace

// numpy matmul: 1-D operands gain an axis (dropped from the result), batch
// axes broadcast. Each operand's matrices are read in place by
// _strided_batch_dot (batch stride 0 for one matrix against a stack); only
// an operand whose batch axes broadcast in part is copied (broadcast_to).
void onnx_matmul_broadcast(OnnxContext& c) {
  Shape sa = c.shape(0), sb = c.shape(1);
  if (sa.empty() || sb.empty()) c.fail("scalar operands are not allowed");
  const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
  if (a1 && b1) c.fail("1-D by 1-D (a scalar result) is not supported");
  if (a1) sa.insert(sa.begin(), 1);
  if (b1) sb.push_back(1);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), kb = sb[sb.size() - 2], n = sb.back();
  if (k != kb) c.fail("A " + shape_str(c.shape(0)) + " and B " + shape_str(c.shape(1)) + " do not multiply");
  const Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  const Shape batch = onnx_util::broadcast_shapes(ba, bb, c.where() + ": batch axes");
  const int64_t count = num_elements(batch);
  // An operand's batch stride: its whole matrix stack, one matrix for all, or
  // a copy broadcast to the full batch.
  auto operand = [&](int i, const Shape& s, const Shape& own, int64_t rows, int64_t cols, int64_t* stride) {
    std::string v = c.input(i);
    const int64_t own_count = num_elements(own);
    Shape padded(batch.size() - own.size(), 1);
    padded.insert(padded.end(), own.begin(), own.end());
    if (own_count == 1) {
      *stride = 0;
    } else if (padded == batch) {
      *stride = rows * cols;
    } else {
      Shape full = batch;
      full.push_back(rows), full.push_back(cols);
      Shape src = padded;
      src.push_back(rows), src.push_back(cols);
      v = reshape(c, v, src, i == 0 ? "a_rank" : "b_rank");
      v = c.add_node("broadcast_to", attrs_of("shape", full), {v}, i == 0 ? "a_broadcast" : "b_broadcast");
      *stride = rows * cols;
    }
    (void)s;
    return v;
  };
  int64_t stride_a = 0, stride_b = 0;
  const std::string va = operand(0, sa, ba, m, k, &stride_a);
  const std::string vb = operand(1, sb, bb, k, n, &stride_b);
  Shape out = batch;
  out.push_back(m), out.push_back(n);
  Attrs a;
  a.set("batch", count);
  a.set("m", m);
  a.set("n", n);
  a.set("k", k);
  a.set("lhs_strides", std::vector<int64_t>{stride_a, k, 1});
  a.set("rhs_strides", std::vector<int64_t>{stride_b, n, 1});
  a.set("out_strides", std::vector<int64_t>{m * n, n, 1});
  a.set("out_shape", out);
  std::string y = c.add_node("_strided_batch_dot", a, {va, vb}, "matmul");
  Shape final_shape = batch;
  if (!a1) final_shape.push_back(m);
  if (!b1) final_shape.push_back(n);
  c.set_output(0, reshape(c, y, final_shape, "out"));
}

}  // namespace hybgen
