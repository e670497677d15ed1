// conv_integer and matmul_integer: ONNX's ConvInteger and MatMulInteger, a
// convolution and a matrix product of int8 or uint8 integers into int32
// sums of (x - x_zero_point) * (w - w_zero_point), with no scale and no
// requantization (docs/quantization.md, "ONNX integer ops"). The two
// operands may be of different dtypes; any quantization on their types is
// not read (the zero points are the attributes). The sums are exact: a
// reduction long enough that they could leave int32 is refused. Kernels:
// plain loops (templates/kernels/integer_products.inc), so every target
// gives the reference's values; CUDA has none (below).
#include <algorithm>
#include <cstdint>
#include <limits>

#include "ir/error.h"
#include "ops/conv_geometry.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

const std::vector<DType>& integer_product_dtypes() {
  static const std::vector<DType> v{DType::kInt8, DType::kUInt8, DType::kInt32};
  return v;
}

// The largest |(x - zx) * (w - zw)| of 8-bit operands is 255 * 255: a sum of
// more terms than this may leave int32.
constexpr int64_t kMaxIntegerTerms = std::numeric_limits<std::int32_t>::max() / (255 * 255);

void check_integer_operand(const TensorType& t, const std::string& what) {
  if (t.dtype != DType::kInt8 && t.dtype != DType::kUInt8)
    throw Error(what + " is " + t.str() + ", expected int8 or uint8" +
                // CUDA's dequantize_graph makes a QuantizeLinear's integers float.
                (t.dtype == DType::kFloat32 ? " (a CUDA target, which computes quantized values in float, has no "
                                              "form of this op)"
                                            : ""));
}

// Zero points of an operand of dtype `dtype`: each in its range, `count`
// values or one.
void check_integer_zero_points(const std::vector<int64_t>& z, DType dtype, const std::string& what,
                               const std::vector<int64_t>& counts) {
  if (std::find(counts.begin(), counts.end(), static_cast<int64_t>(z.size())) == counts.end()) {
    std::string allowed;
    for (int64_t c : counts) allowed += (allowed.empty() ? "" : " or ") + std::to_string(c);
    throw Error(what + " has " + std::to_string(z.size()) + " values, expected " + allowed);
  }
  const auto [lo, hi] = integer_dtype_range(dtype);
  for (int64_t v : z)
    if (v < lo || v > hi)
      throw Error(what + " " + std::to_string(v) + " is outside " + dtype_name(dtype) + "'s range [" +
                  std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

void check_integer_terms(int64_t terms) {
  if (terms > kMaxIntegerTerms)
    throw Error("each output sums " + std::to_string(terms) + " products, more than the " +
                std::to_string(kMaxIntegerTerms) + " that int32 holds in every case");
}

// Calls f(TX{}, TW{}) with the C types of two 8-bit integer dtypes.
template <class F>
void with_integer_operand_types(DType x, DType w, F&& f) {
  with_value_type(x, [&](auto xv) { with_value_type(w, [&](auto wv) { f(xv, wv); }); });
}

std::string integer_zero_point_table(const std::string& name, const std::vector<int64_t>& z) {
  return "  static const std::int32_t " + name + "[] = " + cpp_int_list(z) + ";\n";
}

// ---- conv_integer ------------------------------------------------------------

ConvGeometry integer_conv_geometry(const Attrs& a, const std::vector<TensorType>& in) {
  check_integer_operand(in[0], "data");
  check_integer_operand(in[1], "weight");
  const ConvGeometry g = conv_geometry(a, in[0].shape);
  if (in[1].shape != conv_weight_shape(g))
    throw Error("weight " + shape_str(in[1].shape) + " does not match data " + shape_str(in[0].shape) + " (expected " +
                shape_str(conv_weight_shape(g)) + ")");
  check_integer_zero_points({a.get_int("data_zero_point")}, in[0].dtype, "data_zero_point", {1});
  check_integer_zero_points(a.get_ints("weight_zero_point"), in[1].dtype, "weight_zero_point", {1, g.f});
  check_integer_terms(g.c / g.groups * g.kd * g.kh * g.kw);
  return g;
}

void conv_integer_reference(const KernelIO& io) {
  const ConvGeometry g = integer_conv_geometry(io.attrs, io.in_types);
  const auto xz = io.attrs.get_int("data_zero_point");
  const std::vector<int64_t>& wz = io.attrs.get_ints("weight_zero_point");
  std::int32_t* y = io.output<std::int32_t>(0);
  with_integer_operand_types(io.in_types[0].dtype, io.in_types[1].dtype, [&](auto xv, auto wv) {
    using TX = decltype(xv);
    using TW = decltype(wv);
    const TX* x = io.input<TX>(0);
    const TW* w = io.input<TW>(1);
    const int64_t cg = g.c / g.groups, fg = g.f / g.groups;
    int64_t o = 0;
    for (int64_t b = 0; b < g.n; ++b)
      for (int64_t f = 0; f < g.f; ++f)
        for (int64_t z = 0; z < g.od; ++z)
          for (int64_t i = 0; i < g.oh; ++i)
            for (int64_t j = 0; j < g.ow; ++j) {
              int64_t acc = 0;
              for (int64_t c = 0; c < cg; ++c)
                for (int64_t p = 0; p < g.kd; ++p)
                  for (int64_t q = 0; q < g.kh; ++q)
                    for (int64_t r = 0; r < g.kw; ++r) {
                      const int64_t zz = z * g.sd - g.pd + p * g.dd, ii = i * g.sh - g.ph + q * g.dh,
                                    jj = j * g.sw - g.pw + r * g.dw;
                      // Padding stands for the zero point: it adds nothing.
                      if (zz < 0 || zz >= g.d || ii < 0 || ii >= g.h || jj < 0 || jj >= g.w) continue;
                      const int64_t xi = (((b * g.c + f / fg * cg + c) * g.d + zz) * g.h + ii) * g.w + jj;
                      const int64_t wi = (((f * cg + c) * g.kd + p) * g.kh + q) * g.kw + r;
                      acc += (static_cast<int64_t>(x[xi]) - xz) *
                             (static_cast<int64_t>(w[wi]) - wz[wz.size() == 1 ? 0 : static_cast<std::size_t>(f)]);
                    }
              y[o++] = static_cast<std::int32_t>(acc);
            }
  });
}

std::string integer_conv_literal(const ConvGeometry& g) {
  return "HgIntegerConvGeometry" + cpp_int_list({g.n,  g.c,  g.d,  g.h,  g.w,  g.f,  g.kd, g.kh, g.kw, g.od, g.oh,
                                                 g.ow, g.sd, g.sh, g.sw, g.pd, g.ph, g.pw, g.dd, g.dh, g.dw, g.groups});
}

KernelCall emit_conv_integer_cpp(const EmitContext& ctx) {
  const ConvGeometry g = integer_conv_geometry(ctx.node.attrs, ctx.in_types);
  const std::vector<int64_t>& wz = ctx.node.attrs.get_ints("weight_zero_point");
  return {{"integer_products"},
          "{\n" + integer_zero_point_table("w_zero_points", wz) + "  static const HgIntegerConvGeometry g = " +
              integer_conv_literal(g) + ";\n  hg_conv_integer(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] +
              ", g, " + int_str(ctx.node.attrs.get_int("data_zero_point")) + ", w_zero_points, " +
              int_str(static_cast<int64_t>(wz.size())) + ");\n}"};
}

Attrs conv_integer_attrs(std::vector<int64_t> kernel, int64_t filters, std::vector<int64_t> stride,
                         std::vector<int64_t> pad, std::vector<int64_t> pad_end, std::vector<int64_t> dilate,
                         int64_t groups, int64_t data_zero_point, std::vector<int64_t> weight_zero_point) {
  Attrs a;
  a.set("kernel", std::move(kernel));
  a.set("num_filter", filters);
  a.set("stride", std::move(stride));
  a.set("pad", std::move(pad));
  a.set("pad_end", std::move(pad_end));
  a.set("dilate", std::move(dilate));
  a.set("num_group", groups);
  a.set("data_zero_point", data_zero_point);
  a.set("weight_zero_point", std::move(weight_zero_point));
  return a;
}

const OpRegistrar conv_integer_op([] {
  OpDef d;
  d.name = "conv_integer";
  d.summary =
      "ONNX ConvInteger: int32 sums of (x - data_zero_point) * (w - weight_zero_point) over a 1-D, 2-D or 3-D "
      "convolution window of int8/uint8 data and weight";
  d.input_names = {"data", "weight"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"kernel", AttrKind::kInts, std::nullopt, "(kw), (kh, kw) or (kd, kh, kw)", {}},
             {"num_filter", AttrKind::kInt, std::nullopt, "output channels", {}},
             {"stride", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 1", {}},
             {"dilate", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 1", {}},
             {"pad", AttrKind::kInts, std::vector<int64_t>{}, "one per kernel axis; default 0", {}},
             {"pad_end", AttrKind::kInts, std::vector<int64_t>{}, "padding after each axis' end; empty: as pad", {}},
             {"num_group", AttrKind::kInt, int64_t{1}, "groups", {}},
             {"data_zero_point", AttrKind::kInt, int64_t{0}, "subtracted from the data; padding counts as it", {}},
             {"weight_zero_point",
              AttrKind::kInts,
              std::vector<int64_t>{0},
              "subtracted from the weight: one value, or one per output channel",
              {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{TensorType{conv_output_shape(integer_conv_geometry(a, in)), DType::kInt32}};
  };
  d.reference = conv_integer_reference;
  d.reference_dtypes = integer_product_dtypes();
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>& out) {
    const ConvGeometry g = conv_geometry(a, in[0].shape);
    return 2.0 * static_cast<double>(out[0].num_elements()) * static_cast<double>(g.c / g.groups * g.kd * g.kh * g.kw);
  };
  auto t = [](Shape s, DType dtype) { return TensorType{std::move(s), dtype}; };
  d.examples = {
      // ONNX's test: uint8, zero points, padding.
      {conv_integer_attrs({2, 2}, 2, {}, {1, 1}, {}, {}, 1, 1, {3}),
       {{1, 1, 3, 3}, {2, 1, 2, 2}},
       {t({1, 1, 3, 3}, DType::kUInt8), t({2, 1, 2, 2}, DType::kUInt8)}},
      // int8 data, uint8 weight with one zero point per filter, strides, asymmetric pads, dilation.
      {conv_integer_attrs({3, 3}, 3, {2, 1}, {1, 0}, {0, 2}, {1, 2}, 1, -7, {120, 128, 131}),
       {{2, 2, 6, 7}, {3, 2, 3, 3}},
       {t({2, 2, 6, 7}, DType::kInt8), t({3, 2, 3, 3}, DType::kUInt8)}},
      // 1-D, grouped.
      {conv_integer_attrs({3}, 4, {}, {1}, {}, {}, 2, 200, {-3}),
       {{1, 4, 9}, {4, 2, 3}},
       {t({1, 4, 9}, DType::kUInt8), t({4, 2, 3}, DType::kInt8)}},
      // 3-D, int8.
      {conv_integer_attrs({2, 2, 2}, 2, {1, 2, 1}, {0, 1, 1}, {}, {}, 1, 5, {0, -9}),
       {{1, 2, 3, 4, 3}, {2, 2, 2, 2, 2}},
       {t({1, 2, 3, 4, 3}, DType::kInt8), t({2, 2, 2, 2, 2}, DType::kInt8)}}};
  return d;
}());

const KernelRegistrar conv_integer_cpp(Backend::kCpp, "conv_integer", [] {
  OpKernel k{emit_conv_integer_cpp};
  k.dtypes = integer_product_dtypes();
  return k;
}());

// ---- matmul_integer ------------------------------------------------------------

// A product of numpy-broadcast stacks of matrices: a (..., m, k) by b (...,
// k, n), each output matrix p reading matrix a_matrix[p] of a and
// b_matrix[p] of b (each operand's own stack, row-major).
struct IntegerMatmul {
  Shape out;
  int64_t m, n, k;
  std::vector<int64_t> a_matrix, b_matrix;
  int64_t a_matrices, b_matrices;
};

IntegerMatmul integer_matmul(const Attrs& attrs, const std::vector<TensorType>& in) {
  check_integer_operand(in[0], "a");
  check_integer_operand(in[1], "b");
  const Shape &sa = in[0].shape, &sb = in[1].shape;
  if (sa.size() < 2 || sb.size() < 2)
    throw Error("a " + shape_str(sa) + " and b " + shape_str(sb) + " must have two axes or more");
  IntegerMatmul mm;
  mm.m = sa[sa.size() - 2];
  mm.k = sa.back();
  mm.n = sb.back();
  if (sb[sb.size() - 2] != mm.k) throw Error("a " + shape_str(sa) + " and b " + shape_str(sb) + " do not multiply");
  const std::size_t rank = std::max(sa.size(), sb.size()) - 2;
  Shape ba(rank, 1), bb(rank, 1), batch(rank, 1);
  std::copy(sa.begin(), sa.end() - 2, ba.end() - static_cast<std::ptrdiff_t>(sa.size() - 2));
  std::copy(sb.begin(), sb.end() - 2, bb.end() - static_cast<std::ptrdiff_t>(sb.size() - 2));
  for (std::size_t i = 0; i < rank; ++i) {
    if (ba[i] != bb[i] && ba[i] != 1 && bb[i] != 1)
      throw Error("the batch axes of a " + shape_str(sa) + " and b " + shape_str(sb) + " do not broadcast");
    batch[i] = std::max(ba[i], bb[i]);
  }
  mm.a_matrices = num_elements(ba);
  mm.b_matrices = num_elements(bb);
  const int64_t count = num_elements(batch);
  for (int64_t p = 0; p < count; ++p) {
    int64_t rest = p, ia = 0, ib = 0, stride_a = 1, stride_b = 1;
    for (std::size_t d = rank; d-- > 0;) {
      const int64_t i = rest % batch[d];
      rest /= batch[d];
      ia += (ba[d] == 1 ? 0 : i) * stride_a;
      ib += (bb[d] == 1 ? 0 : i) * stride_b;
      stride_a *= ba[d];
      stride_b *= bb[d];
    }
    mm.a_matrix.push_back(ia);
    mm.b_matrix.push_back(ib);
  }
  mm.out = batch;
  mm.out.push_back(mm.m);
  mm.out.push_back(mm.n);
  check_integer_zero_points(attrs.get_ints("a_zero_point"), in[0].dtype, "a_zero_point",
                            {1, mm.m, mm.a_matrices * mm.m});
  check_integer_zero_points(attrs.get_ints("b_zero_point"), in[1].dtype, "b_zero_point",
                            {1, mm.n, mm.b_matrices * mm.n});
  check_integer_terms(mm.k);
  return mm;
}

void matmul_integer_reference(const KernelIO& io) {
  const IntegerMatmul mm = integer_matmul(io.attrs, io.in_types);
  const std::vector<int64_t>& za = io.attrs.get_ints("a_zero_point");
  const std::vector<int64_t>& zb = io.attrs.get_ints("b_zero_point");
  std::int32_t* y = io.output<std::int32_t>(0);
  with_integer_operand_types(io.in_types[0].dtype, io.in_types[1].dtype, [&](auto av, auto bv) {
    using TA = decltype(av);
    using TB = decltype(bv);
    for (std::size_t p = 0; p < mm.a_matrix.size(); ++p) {
      const TA* a = io.input<TA>(0) + mm.a_matrix[p] * mm.m * mm.k;
      const TB* b = io.input<TB>(1) + mm.b_matrix[p] * mm.k * mm.n;
      for (int64_t i = 0; i < mm.m; ++i)
        for (int64_t j = 0; j < mm.n; ++j) {
          // Zero points per tensor, per row (column) of every matrix, or per row (column) of each.
          const int64_t zai =
              za[static_cast<std::size_t>((mm.a_matrix[p] * mm.m + i) % static_cast<int64_t>(za.size()))];
          const int64_t zbj =
              zb[static_cast<std::size_t>((mm.b_matrix[p] * mm.n + j) % static_cast<int64_t>(zb.size()))];
          int64_t acc = 0;
          for (int64_t q = 0; q < mm.k; ++q)
            acc += (static_cast<int64_t>(a[i * mm.k + q]) - zai) * (static_cast<int64_t>(b[q * mm.n + j]) - zbj);
          y[(static_cast<int64_t>(p) * mm.m + i) * mm.n + j] = static_cast<std::int32_t>(acc);
        }
    }
  });
}

KernelCall emit_matmul_integer(const EmitContext& ctx) {
  const IntegerMatmul mm = integer_matmul(ctx.node.attrs, ctx.in_types);
  const std::vector<int64_t>& za = ctx.node.attrs.get_ints("a_zero_point");
  const std::vector<int64_t>& zb = ctx.node.attrs.get_ints("b_zero_point");
  const std::string sizes = int_str(static_cast<int64_t>(mm.a_matrix.size())) + ", " + int_str(mm.m) + ", " +
                            int_str(mm.n) + ", " + int_str(mm.k);
  return {{"integer_products"},
          "{\n  static const long a_matrix[] = " + cpp_int_list(mm.a_matrix) +
              ";\n  static const long b_matrix[] = " + cpp_int_list(mm.b_matrix) + ";\n" +
              integer_zero_point_table("a_zero_points", za) + integer_zero_point_table("b_zero_points", zb) +
              "  hg_matmul_integer(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] + ", a_matrix, b_matrix, " +
              sizes + ", a_zero_points, " + int_str(static_cast<int64_t>(za.size())) + ", b_zero_points, " +
              int_str(static_cast<int64_t>(zb.size())) + ");\n}"};
}

Attrs matmul_integer_attrs(std::vector<int64_t> a_zero_point, std::vector<int64_t> b_zero_point) {
  Attrs a;
  a.set("a_zero_point", std::move(a_zero_point));
  a.set("b_zero_point", std::move(b_zero_point));
  return a;
}

const OpRegistrar matmul_integer_op([] {
  OpDef d;
  d.name = "matmul_integer";
  d.summary =
      "ONNX MatMulInteger: int32 products (a - a_zero_point) x (b - b_zero_point) of int8/uint8 stacks of matrices, "
      "batch axes broadcast as numpy's matmul";
  d.input_names = {"a", "b"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"a_zero_point",
              AttrKind::kInts,
              std::vector<int64_t>{0},
              "subtracted from a: one value, one per row (m), or one per row of each of a's matrices",
              {}},
             {"b_zero_point",
              AttrKind::kInts,
              std::vector<int64_t>{0},
              "subtracted from b: one value, one per column (n), or one per column of each of b's matrices",
              {}}};
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    return std::vector<TensorType>{TensorType{integer_matmul(a, in).out, DType::kInt32}};
  };
  d.reference = matmul_integer_reference;
  d.reference_dtypes = integer_product_dtypes();
  d.flops = [](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>& out) {
    return 2.0 * static_cast<double>(out[0].num_elements()) * static_cast<double>(integer_matmul(a, in).k);
  };
  auto t = [](Shape s, DType dtype) { return TensorType{std::move(s), dtype}; };
  d.examples = {
      // ONNX's test: uint8 with zero points.
      {matmul_integer_attrs({12}, {0}), {{4, 3}, {3, 2}}, {t({4, 3}, DType::kUInt8), t({3, 2}, DType::kUInt8)}},
      // int8 by uint8, per-row and per-column zero points, a stack against one matrix.
      {matmul_integer_attrs({-3, 0, 7, 100, -128}, {128, 0, 255, 17, 3, 90}),
       {{2, 5, 9}, {9, 6}},
       {t({2, 5, 9}, DType::kInt8), t({9, 6}, DType::kUInt8)}},
      // Batch axes that broadcast on both sides, zero points per row of each of a's matrices.
      {matmul_integer_attrs({1, 2, 3, 4, 5, 6}, {-5}),
       {{3, 1, 2, 4}, {2, 4, 3}},
       {t({3, 1, 2, 4}, DType::kUInt8), t({2, 4, 3}, DType::kInt8)}}};
  return d;
}());

const KernelRegistrar matmul_integer_cpp(Backend::kCpp, "matmul_integer", [] {
  OpKernel k{emit_matmul_integer};
  k.dtypes = integer_product_dtypes();
  return k;
}());

// CUDA runs quantized models through float (Target::int8_through_float) and
// its fused loop computes float32 only, so the integer conversions around
// these ops have no CUDA form either: a model with them is refused there,
// by check_kernels for those conversions or here, naming the node.
KernelCall refuse_integer_op_on_cuda(const EmitContext& ctx) {
  throw Error(node_label(ctx.node.name, ctx.node.op) + ": ONNX's integer ops have no CUDA kernel yet");
}

const int integer_products_cuda = [] {
  for (const char* op : {"conv_integer", "matmul_integer"}) {
    OpKernel k{refuse_integer_op_on_cuda};
    k.dtypes = integer_product_dtypes();
    register_kernel(Backend::kCuda, op, std::move(k));
  }
  return 0;
}();

}  // namespace
}  // namespace hybgen
