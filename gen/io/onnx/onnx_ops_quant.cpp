// ONNX's quantization ops: QuantizeLinear and DequantizeLinear, per tensor
// and per axis, onto the registry's `quantize` and `dequantize`
// (docs/quantization.md); QLinearConv and QLinearMatMul onto Convolution and
// FullyConnected on quantized types; ConvInteger and MatMulInteger onto
// conv_integer and matmul_integer (int32 sums, no scales). Scales and zero points must be constants known at
// import: hybgen's quantized types carry them. A DequantizeLinear of a
// constant (a QDQ model's weights and biases) is folded at import but keeps
// its integers (OnnxConst::dequantized), so the graph gets int8 weights and
// a `dequantize` that the fold_qdq pass turns, with the float layer and the
// QuantizeLinear after it, into an int8 kernel.
#include <algorithm>
#include <cmath>

#include "io/onnx/onnx_ops.h"
#include "io/onnx/onnx_pads.h"
#include "ir/error.h"

namespace hybgen {
namespace {

// Scale and zero point of a QuantizeLinear / DequantizeLinear node.
struct QParams {
  Quantization quantization;
  DType dtype = DType::kUInt8;  // the integers' dtype (the zero point's)
};

QParams read_qparams(OnnxContext& c, const Shape& x, DType default_dtype) {
  // hybgen's quantized types hold scales and zero points known at import:
  // constant() fails naming the node and the input otherwise.
  for (int i = 1; i <= 2; ++i)
    if (c.has_input(i)) c.constant(i);
  const OnnxConst& scale = c.constant(1);
  if (!scale.is_float()) c.fail("the scale is " + dtype_name(scale.dtype) + ", expected a float");
  QParams p;
  p.dtype = c.has_input(2) ? c.constant(2).dtype : default_dtype;
  if (p.dtype != DType::kInt8 && p.dtype != DType::kUInt8 && p.dtype != DType::kInt32)
    c.fail("quantized values of dtype " + dtype_name(p.dtype) + " are not supported (int8, uint8 and int32 are)");
  const int64_t n = scale.size();
  std::vector<int64_t> zp(static_cast<std::size_t>(n), 0);
  if (c.has_input(2)) {
    const OnnxConst& z = c.constant(2);
    if (z.size() != n)
      c.fail("the zero point has " + std::to_string(z.size()) + " values, the scale " + std::to_string(n));
    zp = z.as_ints();
  }
  std::vector<float> s(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) s[static_cast<std::size_t>(i)] = static_cast<float>(scale.at_double(i));
  const int64_t axis_attr = c.attr_int("axis", 1);
  if (scale.shape.size() == 0 || (scale.shape.size() == 1 && n == 1)) {
    p.quantization = Quantization::per_tensor(s.at(0), zp.at(0));
    return p;
  }
  if (scale.shape.size() != 1)
    c.fail("the scale has shape " + shape_str(scale.shape) + "; blocked quantization is not supported");
  const int64_t axis = onnx_util::normalize_axis(axis_attr, static_cast<int64_t>(x.size()), c.where() + ": axis");
  if (x[static_cast<std::size_t>(axis)] != n)
    c.fail("the scale has " + std::to_string(n) + " values, axis " + std::to_string(axis) + " of the input " +
           shape_str(x) + " has " + std::to_string(x[static_cast<std::size_t>(axis)]));
  p.quantization = Quantization::per_axis(static_cast<int>(axis), std::move(s), std::move(zp));
  return p;
}

// The index along the quantization axis of element i (0 per tensor).
std::size_t channel_of(const Quantization& q, const Shape& shape, int64_t i) {
  if (!q.axis) return 0;
  int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(*q.axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  return static_cast<std::size_t>((i / inner) % shape[static_cast<std::size_t>(*q.axis)]);
}

// DequantizeLinear of a constant: (x - zero point) * scale in float32, as ONNX
// Runtime computes it, keeping the integers.
void dequantize_at_import(OnnxContext& c) {
  const OnnxConst& x = c.constant(0);
  const QParams p = read_qparams(c, x.shape, x.dtype);
  if (x.dtype != p.dtype) c.fail("the input is " + dtype_name(x.dtype) + ", the zero point " + dtype_name(p.dtype));
  const Quantization& q = p.quantization;
  std::vector<double> y(static_cast<std::size_t>(x.size()));
  for (int64_t i = 0; i < x.size(); ++i) {
    const std::size_t ch = channel_of(q, x.shape, i);
    y[static_cast<std::size_t>(i)] =
        static_cast<float>(static_cast<float>(x.at_int(i) - q.zero_point[ch]) * q.scale[ch]);
  }
  OnnxConst out = OnnxConst::of_floats(x.shape, std::move(y));
  try {  // a scale the quantized types refuse (zero, NaN) leaves a plain float constant
    check_quantization(TensorType{x.shape, x.dtype, q}, "");
    out.dequantized = std::make_shared<OnnxConst::Dequantized>(OnnxConst::Dequantized{x, q});
  } catch (const Error&) {
  }
  c.set_constant(0, std::move(out));
}

const OnnxConverterRegistrar dequantize_reg(
    OnnxConverter("DequantizeLinear")
        .folds(dequantize_at_import)
        .converts([](OnnxContext& c) {
          if (c.is_constant(0)) return dequantize_at_import(c);  // too large to fold: the same, kept as integers
          const std::string x = c.input(0);
          const TensorType& t = c.type(x);
          const QParams p = read_qparams(c, t.shape, t.dtype);
          if (t.quantization.empty())
            c.fail("the input is " + t.str() +
                   "; a DequantizeLinear computed at run time takes the output of a QuantizeLinear");
          if (t.dtype != p.dtype || t.quantization != p.quantization)
            c.fail("the input is " + t.str() + ", but the node dequantizes it as " + dtype_name(p.dtype) + " " +
                   p.quantization.str() + "; hybgen does not reinterpret quantized values");
          c.set_output(0, c.add_node("dequantize", {}, {x}));
        })
        .handles({"axis"})
        .since(10));

// QuantizeLinear of a constant: round half to even, as ONNX says.
void quantize_at_import(OnnxContext& c) {
  const OnnxConst& x = c.constant(0);
  const QParams p = read_qparams(c, x.shape, DType::kUInt8);
  if (p.dtype == DType::kInt32) c.fail("QuantizeLinear to int32 is not supported");
  const auto [lo, hi] = integer_dtype_range(p.dtype);
  const Quantization& q = p.quantization;
  std::vector<int64_t> y(static_cast<std::size_t>(x.size()));
  for (int64_t i = 0; i < x.size(); ++i) {
    const std::size_t ch = channel_of(q, x.shape, i);
    const double v =
        std::nearbyint(static_cast<float>(x.at_double(i)) / q.scale[ch]) + static_cast<double>(q.zero_point[ch]);
    y[static_cast<std::size_t>(i)] =
        std::isnan(v) ? q.zero_point[ch] : static_cast<int64_t>(std::min<double>(hi, std::max<double>(lo, v)));
  }
  c.set_constant(0, OnnxConst::of_ints(x.shape, std::move(y), p.dtype));
}

const OnnxConverterRegistrar quantize_reg(OnnxConverter("QuantizeLinear")
                                              .folds(quantize_at_import)
                                              .converts([](OnnxContext& c) {
                                                if (c.is_constant(0)) return quantize_at_import(c);
                                                const std::string x = c.input(0);
                                                const QParams p = read_qparams(c, c.type(x).shape, DType::kUInt8);
                                                if (p.dtype == DType::kInt32)
                                                  c.fail("QuantizeLinear to int32 is not supported");
                                                if (p.quantization.axis)
                                                  c.fail(
                                                      "per-axis quantization of a value computed at run time is not "
                                                      "supported (hybgen's quantize is per tensor)");
                                                Attrs a;
                                                a.set("out_scale", static_cast<double>(p.quantization.scale[0]));
                                                a.set("out_zero_point", p.quantization.zero_point[0]);
                                                a.set("out_dtype", dtype_name(p.dtype));
                                                c.set_output(0, c.add_node("quantize", a, {x}), p.dtype);
                                              })
                                              .handles({"axis"})
                                              .ignores({"saturate"})  // float8 only
                                              .since(10));

// ---- QLinearConv, QLinearMatMul -------------------------------------------

// Scale and zero point at inputs (scale_i, scale_i + 1) of a QLinear* node,
// with `data`'s shape (for a per-axis scale along `axis`).
QParams qlinear_params(OnnxContext& c, int scale_i, const Shape& data, DType data_dtype, int64_t axis) {
  for (int i = scale_i; i <= scale_i + 1; ++i) c.constant(i);  // fails naming the input when computed at run time
  const OnnxConst& scale = c.constant(scale_i);
  const OnnxConst& zp = c.constant(scale_i + 1);
  if (!scale.is_float()) c.fail("input " + std::to_string(scale_i) + " (scale) is " + dtype_name(scale.dtype));
  if (zp.dtype != data_dtype)
    c.fail("input " + std::to_string(scale_i + 1) + " (zero point) is " + dtype_name(zp.dtype) + ", its data " +
           dtype_name(data_dtype));
  if (data_dtype != DType::kInt8 && data_dtype != DType::kUInt8)
    c.fail("quantized values of dtype " + dtype_name(data_dtype) + " are not supported (int8 and uint8 are)");
  const int64_t n = scale.size();
  if (zp.size() != n)
    c.fail("input " + std::to_string(scale_i + 1) + " (zero point) has " + std::to_string(zp.size()) +
           " values, the scale " + std::to_string(n));
  std::vector<float> s(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) s[static_cast<std::size_t>(i)] = static_cast<float>(scale.at_double(i));
  QParams p;
  p.dtype = data_dtype;
  if (n == 1) {
    p.quantization = Quantization::per_tensor(s[0], zp.at_int(0));
  } else if (scale.shape.size() == 1 && axis >= 0 && axis < static_cast<int64_t>(data.size()) &&
             data[static_cast<std::size_t>(axis)] == n) {
    p.quantization = Quantization::per_axis(static_cast<int>(axis), std::move(s), zp.as_ints());
  } else {
    c.fail("input " + std::to_string(scale_i) + " (scale) has shape " + shape_str(scale.shape) +
           "; it must hold one value or one per output channel");
  }
  return p;
}

// The quantized data input 0 (zero point dtype at input 2): a runtime value
// that must carry the node's quantization, or a constant.
std::string qlinear_data(OnnxContext& c, const QParams& p) {
  if (c.is_constant(0)) return c.add_quantized_constant(c.constant(0), p.quantization, "x");
  const std::string x = c.input(0);
  const TensorType& t = c.type(x);
  if (t.dtype != p.dtype || t.quantization != p.quantization)
    c.fail("input 0 is " + t.str() + ", but the node reads it as " + dtype_name(p.dtype) + " " + p.quantization.str() +
           "; hybgen does not reinterpret quantized values");
  return x;
}

// A weight as hybgen's int8 symmetric one: int8 with zero points 0 as it is,
// uint8 with zero points 128 shifted to int8 (exact); anything else refused.
OnnxConst symmetric_weight(OnnxContext& c, const OnnxConst& w, Quantization& q, const std::string& what) {
  for (int64_t z : q.zero_point) {
    const int64_t want = w.dtype == DType::kUInt8 ? 128 : 0;
    if (z != want)
      c.fail(what + " has zero point " + std::to_string(z) + ": hybgen computes with symmetric int8 weights (int8 " +
             "with zero point 0, or uint8 with 128), and this one cannot be converted exactly");
  }
  if (w.dtype == DType::kInt8) return w;
  std::vector<int64_t> v = w.as_ints();
  for (int64_t& x : v) x -= 128;
  for (int64_t& z : q.zero_point) z = 0;
  return OnnxConst::of_ints(w.shape, std::move(v), DType::kInt8);
}

// Output attributes from y_scale and y_zero_point (inputs yi, yi + 1), which
// must be per tensor and of the data's dtype.
void set_out_params(OnnxContext& c, Attrs& a, int yi, DType dtype) {
  const QParams y = qlinear_params(c, yi, {}, dtype, -1);
  a.set("out_scale", static_cast<double>(y.quantization.scale[0]));
  a.set("out_zero_point", y.quantization.zero_point[0]);
}

const OnnxConverterRegistrar qlinear_conv_reg(
    OnnxConverter("QLinearConv")
        .converts([](OnnxContext& c) {
          const Shape xs = c.shape(0), ws = c.shape(3);
          if (!c.is_constant(3)) c.fail("input 3 (w) must be a constant initializer");
          const QParams xp = qlinear_params(c, 1, xs, c.dtype(0), -1);
          if (xp.quantization.axis) c.fail("input 1 (x_scale) must be one value");
          QParams wp = qlinear_params(c, 4, ws, c.dtype(3), 0);
          const OnnxConst w = symmetric_weight(c, c.constant(3), wp.quantization, "input 3 (w)");
          Attrs a = onnx_conv_attrs(c, xs, ws);
          set_out_params(c, a, 6, xp.dtype);
          std::vector<std::string> in = {qlinear_data(c, xp), c.add_quantized_constant(w, wp.quantization, "weight")};
          if (c.has_input(8)) {
            if (!c.is_constant(8)) c.fail("input 8 (B) must be a constant initializer");
            const OnnxConst& b = c.constant(8);
            if (b.dtype != DType::kInt32 || b.shape != Shape{ws[0]})
              c.fail("input 8 (B) is " + dtype_name(b.dtype) + shape_str(b.shape) + ", expected int32(" +
                     std::to_string(ws[0]) + ")");
            std::vector<float> scales(static_cast<std::size_t>(ws[0]));
            for (int64_t m = 0; m < ws[0]; ++m)
              scales[static_cast<std::size_t>(m)] =
                  xp.quantization.scale[0] *
                  wp.quantization.scale[wp.quantization.axis ? static_cast<std::size_t>(m) : 0];
            in.push_back(c.add_quantized_constant(
                b, Quantization::per_axis(0, scales, std::vector<int64_t>(scales.size(), 0)), "bias"));
          } else {
            a.set("no_bias", true);
          }
          c.set_output(0, c.add_node("Convolution", a, in), xp.dtype);
        })
        .handles({"kernel_shape", "strides", "dilations", "pads", "group", "auto_pad"})
        .checks(check_window_pads)
        .since(10));

// QLinearMatMul with a constant 2-D B: FullyConnected over A's leading axes,
// the weight B transposed (its per-column scales become per output channel).
const OnnxConverterRegistrar qlinear_matmul_reg(
    OnnxConverter("QLinearMatMul")
        .converts([](OnnxContext& c) {
          const Shape as = c.shape(0), bs = c.shape(3);
          if (!c.is_constant(3) || bs.size() != 2)
            c.fail("input 3 (b) must be a constant 2-D initializer (hybgen computes it as a dense layer)");
          if (as.size() < 2 || as.back() != bs[0])
            c.fail("a " + shape_str(as) + " and b " + shape_str(bs) + " do not multiply");
          const QParams ap = qlinear_params(c, 1, as, c.dtype(0), -1);
          if (ap.quantization.axis) c.fail("input 1 (a_scale) must be one value");
          QParams bp = qlinear_params(c, 4, bs, c.dtype(3), 1);
          const OnnxConst b = symmetric_weight(c, c.constant(3), bp.quantization, "input 3 (b)");
          const int64_t k = bs[0], n = bs[1];
          std::vector<int64_t> wt(static_cast<std::size_t>(n * k));
          for (int64_t j = 0; j < n; ++j)
            for (int64_t q = 0; q < k; ++q) wt[static_cast<std::size_t>(j * k + q)] = b.at_int(q * n + j);
          Quantization wq = bp.quantization;
          if (wq.axis) wq.axis = 0;
          Attrs a;
          a.set("num_hidden", n);
          a.set("no_bias", true);
          a.set("flatten", false);
          set_out_params(c, a, 6, ap.dtype);
          const std::string w =
              c.add_quantized_constant(OnnxConst::of_ints({n, k}, std::move(wt), DType::kInt8), wq, "weight");
          c.set_output(0, c.add_node("FullyConnected", a, {qlinear_data(c, ap), w}), ap.dtype);
        })
        .since(10));

// ---- ConvInteger, MatMulInteger -------------------------------------------
// conv_integer and matmul_integer compute the int32 sums exactly. Their
// operands are IR values of the ONNX dtype: a constant as an integer graph
// constant, a QuantizeLinear's output as its integers, and a runtime integer
// the importer holds as float32 through a Cast to it. At run time the int32
// result is held as float32 like every integer the importer computes: exact
// up to 2^24, and what ONNX's Cast to FLOAT that follows in real models
// (ONNX Runtime's dynamic quantization) gives in any case.

// Operand i (int8 or uint8) as an IR value of its dtype.
std::string integer_operand(OnnxContext& c, int i, const std::string& name) {
  const DType dtype = c.dtype(i);
  if (dtype != DType::kInt8 && dtype != DType::kUInt8)
    c.fail("input " + std::to_string(i) + " (" + name + ") is " + dtype_name(dtype) + ", expected int8 or uint8");
  if (c.is_constant(i) && !c.at_import()) return c.add_quantized_constant(c.constant(i), Quantization{}, name);
  const std::string v = c.input(i);
  const DType held = c.type(v).dtype;
  if (held == dtype) return v;
  if (held == DType::kFloat32) return c.add_node("Cast", onnx_util::attrs_of("dtype", dtype_name(dtype)), {v}, name);
  throw Error(c.where() + ": input " + std::to_string(i) + " (" + name + ") is held as " + c.type(v).str() +
              ", expected " + dtype_name(dtype));
}

// Zero point input zi of operand i (absent: 0): a constant of the operand's
// dtype; its values and shape are the caller's to check.
OnnxConst integer_zero_point(OnnxContext& c, int zi, int i, const std::string& name) {
  if (!c.has_input(zi)) return OnnxConst::of_ints({}, {0}, c.dtype(i));
  const OnnxConst& z = c.constant(zi);  // fails naming the input when computed at run time (DynamicQuantizeLinear)
  if (z.dtype != c.dtype(i))
    c.fail("input " + std::to_string(zi) + " (" + name + ") is " + dtype_name(z.dtype) + ", its operand " +
           dtype_name(c.dtype(i)));
  return z;
}

// The int32 result `y` with shape `shape`, bound to output 0 (as float32 at
// run time, above).
void set_integer_output(OnnxContext& c, const std::string& y, const Shape& shape) {
  if (c.at_import()) return c.set_output(0, onnx_util::reshape(c, y, shape, "out"));
  const std::string f = c.add_node("Cast", onnx_util::attrs_of("dtype", std::string("float32")), {y}, "float");
  c.set_output(0, onnx_util::reshape(c, f, shape, "out"), DType::kInt32);
}

const OnnxConverterRegistrar conv_integer_reg(
    OnnxConverter("ConvInteger")
        .converts([](OnnxContext& c) {
          const Shape xs = c.shape(0), ws = c.shape(1);
          Attrs a = onnx_conv_attrs(c, xs, ws);
          const std::string x = integer_operand(c, 0, "x"), w = integer_operand(c, 1, "w");
          const OnnxConst xz = integer_zero_point(c, 2, 0, "x_zero_point");
          if (xz.size() != 1)
            c.fail("input 2 (x_zero_point) has shape " + shape_str(xz.shape) + "; ConvInteger takes one value");
          const OnnxConst wz = integer_zero_point(c, 3, 1, "w_zero_point");
          if (wz.size() != 1 && wz.shape != Shape{ws[0]})
            c.fail("input 3 (w_zero_point) has shape " + shape_str(wz.shape) + "; it must hold one value or one per " +
                   "output channel (" + std::to_string(ws[0]) + ")");
          a.set("data_zero_point", xz.at_int(0));
          a.set("weight_zero_point", wz.as_ints());
          const std::string y = c.add_node("conv_integer", a, {x, w});
          set_integer_output(c, y, c.type(y).shape);
        })
        .handles({"kernel_shape", "strides", "dilations", "pads", "group", "auto_pad"})
        .checks(check_window_pads)
        .since(10));

// MatMulInteger's zero point of operand i, whose matrices are (rows x cols)
// with `batch` leading axes, as matmul_integer's list: one value, one per
// row (per column for b: `per_col`), or one per row (column) of each
// matrix. ONNX writes the last two as an M-vector (N-vector) or a tensor
// of the operand's rank with the other matrix axis 1.
std::vector<int64_t> matmul_zero_points(OnnxContext& c, int zi, int i, const std::string& name, const Shape& s,
                                        bool per_col) {
  const OnnxConst z = integer_zero_point(c, zi, i, name);
  if (z.size() == 1) return {z.at_int(0)};
  const int64_t rows = s[s.size() - 2], cols = s.back(), count = per_col ? cols : rows;
  if (z.shape == Shape{count}) return z.as_ints();
  Shape want(s.begin(), s.end() - 2);
  want.push_back(per_col ? 1 : rows);
  want.push_back(per_col ? cols : 1);
  Shape ones = want;
  std::fill(ones.begin(), ones.end() - 2, 1);
  if (z.shape == want || z.shape == ones) return z.as_ints();
  throw Error(c.where() + ": input " + std::to_string(zi) + " (" + name + ") has shape " + shape_str(z.shape) +
              "; for " + (per_col ? "b " : "a ") + shape_str(s) + " it must be one value, " + std::to_string(count) +
              " (one per " + (per_col ? "column" : "row") + ") or shape " + shape_str(want));
}

const OnnxConverterRegistrar matmul_integer_reg(
    OnnxConverter("MatMulInteger")
        .converts([](OnnxContext& c) {
          Shape sa = c.shape(0), sb = c.shape(1);
          if (sa.empty() || sb.empty()) c.fail("scalar operands are not allowed");
          const bool a1 = sa.size() == 1, b1 = sb.size() == 1;
          if (a1) sa.insert(sa.begin(), 1);
          if (b1) sb.push_back(1);
          std::string va = integer_operand(c, 0, "A"), vb = integer_operand(c, 1, "B");
          Attrs a;
          a.set("a_zero_point", matmul_zero_points(c, 2, 0, "a_zero_point", sa, false));
          a.set("b_zero_point", matmul_zero_points(c, 3, 1, "b_zero_point", sb, true));
          if (a1) va = onnx_util::reshape(c, va, sa, "A_matrix");
          if (b1) vb = onnx_util::reshape(c, vb, sb, "B_matrix");
          const std::string y = c.add_node("matmul_integer", a, {va, vb});
          Shape out = c.type(y).shape;  // numpy drops the axes the 1-D operands gained
          if (b1) out.pop_back();
          if (a1) out.erase(out.end() - (b1 ? 1 : 2));
          set_integer_output(c, y, out);
        })
        .since(10));

}  // namespace
}  // namespace hybgen
