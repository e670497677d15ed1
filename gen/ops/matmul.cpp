// dot and batch_dot: matrix products. dot takes a of any rank (its last axis,
// or its first with transpose_a on 2-D) against a 2-D b; batch_dot multiplies
// (B, M, K) by (B, K, N), each side optionally transposed. _strided_batch_dot
// (made by fuse_strided_batch_dot) reads its operands and writes its result
// through explicit strides, so reshape/transpose views around a batch_dot
// (attention heads) cost nothing. The generated kernel
// (templates/kernels/matmul.inc) packs the operands into arena scratch and
// runs the packed GEMM of gemm.inc, with elementwise successors (a scale, a
// mask) fused as its epilogue. On quantized operands (int8 or uint8 per
// tensor, both activations, as attention's) each computes int32 sums of the
// products of the operands less their zero points, requantized into an
// output scale of its own (out_scale; templates/kernels/matmul_q8.inc).

#include <algorithm>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/quantized.h"
#include "ops/reference_blas.h"

namespace hybgen {
namespace {

// How one operand's matrices lie in memory: element (i, j) of matrix p at
// p * batch + i * row + j * col.
struct Layout {
  int64_t batch, row, col;
};

// One product as the kernel runs it: y[p] (m x n) = A[p] (m x k) * B[p]
// (k x n), with the epilogue's channel the output index modulo `channels`.
struct MatmulCall {
  int64_t batch, m, n, k;
  Layout a, b, y;
  int64_t channels;
};

MatmulCall contiguous_call(int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  const Layout a = ta ? Layout{m * k, 1, m} : Layout{m * k, k, 1};
  const Layout b = tb ? Layout{k * n, 1, k} : Layout{k * n, n, 1};
  return {batch, m, n, k, a, b, Layout{m * n, n, 1}, n};
}

MatmulCall dot_call(const Attrs& a, const Shape& sa, const Shape& sb) {
  const bool ta = a.get_bool("transpose_a"), tb = a.get_bool("transpose_b");
  if (sb.size() != 2) throw Error("dot needs a 2-D right operand, got " + shape_str(sb));
  if (ta && sa.size() != 2) throw Error("dot with transpose_a needs a 2-D left operand, got " + shape_str(sa));
  if (sa.empty()) throw Error("dot needs a left operand with at least one axis");
  const int64_t k = ta ? sa[0] : sa.back();
  const int64_t m = ta ? sa[1] : dims_product(sa, 0, sa.size() - 1);
  const int64_t kb = tb ? sb[1] : sb[0];
  const int64_t n = tb ? sb[0] : sb[1];
  if (kb != k) throw Error("inner sizes differ: " + shape_str(sa) + " and " + shape_str(sb));
  return contiguous_call(1, m, n, k, ta, tb);
}

MatmulCall batch_call(const Attrs& a, const Shape& sa, const Shape& sb) {
  const bool ta = a.get_bool("transpose_a"), tb = a.get_bool("transpose_b");
  if (sa.size() != 3 || sb.size() != 3 || sa[0] != sb[0])
    throw Error("batch_dot needs (B, M, K) and (B, K, N), got " + shape_str(sa) + " and " + shape_str(sb));
  const int64_t m = ta ? sa[2] : sa[1], k = ta ? sa[1] : sa[2], n = tb ? sb[1] : sb[2];
  if ((tb ? sb[2] : sb[1]) != k) throw Error("inner sizes differ: " + shape_str(sa) + " and " + shape_str(sb));
  return contiguous_call(sa[0], m, n, k, ta, tb);
}

Layout layout_attr(const Attrs& a, const std::string& name) {
  const std::vector<int64_t> v = a.get_ints(name);
  if (v.size() != 3) throw Error(name + " needs 3 strides (batch, row, column), got " + std::to_string(v.size()));
  if (std::any_of(v.begin(), v.end(), [](int64_t s) { return s < 0; })) throw Error(name + " has a negative stride");
  return {v[0], v[1], v[2]};
}

// An operand's matrices must have contiguous rows or contiguous columns
// (the kernel's two packings), rows or columns not overlapping, and lie
// inside the operand's `elements`.
void check_operand(const std::string& name, const Layout& l, int64_t batch, int64_t rows, int64_t cols,
                   int64_t elements) {
  const bool row_major = l.col == 1 && (rows == 1 || l.row >= cols);
  const bool col_major = l.row == 1 && (cols == 1 || l.col >= rows);
  if (!row_major && !col_major)
    throw Error(name +
                " needs rows or columns of unit stride that do not overlap, "
                "got strides (" +
                std::to_string(l.batch) + ", " + std::to_string(l.row) + ", " + std::to_string(l.col) + ") for " +
                std::to_string(rows) + " x " + std::to_string(cols));
  const int64_t last = (batch - 1) * l.batch + (rows - 1) * l.row + (cols - 1) * l.col;
  if (last >= elements)
    throw Error(name + " reads element " + std::to_string(last) + " of " + std::to_string(elements));
}

// The product as its attributes give it; checked once, by the shape rule
// (check_strided_call), not on every use.
MatmulCall strided_call(const Attrs& a, const Shape& out) {
  MatmulCall c{a.get_int("batch"), a.get_int("m"), a.get_int("n"), a.get_int("k"), {}, {}, {}, 0};
  c.a = layout_attr(a, "lhs_strides");
  c.b = layout_attr(a, "rhs_strides");
  c.y = layout_attr(a, "out_strides");
  c.channels = out.empty() ? 0 : out.back();
  return c;
}

void check_strided_call(const MatmulCall& c, const std::vector<TensorType>& in, const Shape& out) {
  if (c.batch < 1 || c.m < 1 || c.n < 1 || c.k < 1) throw Error("batch, m, n and k must be positive");
  check_operand("lhs", c.a, c.batch, c.m, c.k, num_elements(in[0].shape));
  check_operand("rhs", c.b, c.batch, c.k, c.n, num_elements(in[1].shape));
  if (out.empty() || num_elements(out) != c.batch * c.m * c.n)
    throw Error("out_shape " + shape_str(out) + " does not hold " + std::to_string(c.batch) + " x " +
                std::to_string(c.m) + " x " + std::to_string(c.n) + " values");
  if (c.y.col != 1) throw Error("out_strides needs a unit column stride");
  // The epilogue's channel is the column plus a shift per matrix: each row
  // of each matrix must lie within one run of the last axis.
  if (c.y.row % c.channels != 0 && c.m > 1)
    throw Error("out_strides' row stride must be a multiple of the last axis (" + std::to_string(c.channels) + ")");
  std::vector<bool> written(static_cast<std::size_t>(num_elements(out)), false);
  for (int64_t p = 0; p < c.batch; ++p) {
    if (p * c.y.batch % c.channels + c.n > c.channels)
      throw Error("out_strides puts a row of matrix " + std::to_string(p) + " across the last axis");
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.n; ++j) {
        const int64_t at = p * c.y.batch + i * c.y.row + j;
        if (at >= static_cast<int64_t>(written.size()) || written[at])
          throw Error("out_strides does not write each output element once");
        written[at] = true;
      }
  }
}

// One sgemm per matrix: a unit column stride is untransposed with the row
// stride as leading dimension, a unit row stride transposed.
void run_reference(const MatmulCall& c, const KernelIO& io) {
  auto op = [](const Layout& l) { return l.col != 1; };
  auto ld = [](const Layout& l, int64_t inner) {
    return static_cast<int>(std::max(l.col == 1 ? l.row : l.col, inner));
  };
  for (int64_t p = 0; p < c.batch; ++p)
    reference_sgemm(op(c.a), op(c.b), static_cast<int>(c.m), static_cast<int>(c.n), static_cast<int>(c.k),
                    io.input<float>(0) + p * c.a.batch, ld(c.a, c.a.col == 1 ? c.k : c.m),
                    io.input<float>(1) + p * c.b.batch, ld(c.b, c.b.col == 1 ? c.n : c.k),
                    io.output<float>(0) + p * c.y.batch, static_cast<int>(std::max(c.y.row, c.n)));
}

// The output type for operands `in` of this output shape: float as they
// are; quantized ones (both int8 or uint8 per tensor, of one dtype) into
// out_scale and out_zero_point.
TensorType matmul_output(const Attrs& a, const std::vector<TensorType>& in, const Shape& shape) {
  if (in[0].quantization.empty() != in[1].quantization.empty())
    throw Error("one operand is quantized and the other not (" + in[0].str() + ", " + in[1].str() + ")");
  if (!in[0].quantization.empty()) {
    for (const TensorType& t : in)
      if ((t.dtype != DType::kInt8 && t.dtype != DType::kUInt8) || t.quantization.axis)
        throw Error("quantized operands must be int8 or uint8 per tensor, not " + t.str());
    if (in[0].dtype != in[1].dtype) throw Error("lhs is " + in[0].str() + " but rhs is " + in[1].str());
  }
  return quantized_output(a, in[0], shape);
}

// The quantized product: int32 sums of (a - za) * (b - zb) requantized by
// a_scale * b_scale / out_scale, as templates/kernels/matmul_q8.inc.
void run_reference_quantized(const MatmulCall& c, const KernelIO& io) {
  const TensorType &ta = io.in_types[0], &tb = io.in_types[1], &out = io.out_types[0];
  const Requantization r = requantization(static_cast<double>(ta.quantization.scale[0]) * tb.quantization.scale[0] /
                                          out.quantization.scale[0]);
  const auto za = static_cast<std::int32_t>(ta.quantization.zero_point[0]),
             zb = static_cast<std::int32_t>(tb.quantization.zero_point[0]),
             zo = static_cast<std::int32_t>(out.quantization.zero_point[0]);
  const std::pair<std::int32_t, std::int32_t> range = int32_range(out.dtype);  // captured below: no binding
  const std::int32_t lo = range.first, hi = range.second;
  with_value_type(ta.dtype, [&](auto value) {
    using T = decltype(value);
    const T* a = io.input<T>(0);
    const T* b = io.input<T>(1);
    T* y = io.output<T>(0);
    for (int64_t p = 0; p < c.batch; ++p)
      for (int64_t i = 0; i < c.m; ++i)
        for (int64_t j = 0; j < c.n; ++j) {
          std::int32_t acc = 0;
          for (int64_t kk = 0; kk < c.k; ++kk)
            acc += (static_cast<std::int32_t>(a[p * c.a.batch + i * c.a.row + kk * c.a.col]) - za) *
                   (static_cast<std::int32_t>(b[p * c.b.batch + kk * c.b.row + j * c.b.col]) - zb);
          y[p * c.y.batch + i * c.y.row + j] = static_cast<T>(requantize_clamp(acc, r, zo, lo, hi));
        }
  });
}

void run_any_reference(const MatmulCall& c, const KernelIO& io) {
  if (io.in_types[0].quantization.empty()) return run_reference(c, io);
  run_reference_quantized(c, io);
}

// What hg_batch_matmul_q8 (matmul_q8.inc) packs into: the right operand in
// the int8 GEMM's panels, its column sums, the multipliers and shifts per
// column, the left one's row offsets and, where its columns are not
// contiguous, its rows.
int64_t matmul_q8_scratch_bytes(const MatmulCall& c, const Target& target) {
  const int64_t group = target.q8_group, nr = target.gemm_nr;
  const int64_t groups = (c.k + group - 1) / group, panels = (c.n + nr - 1) / nr;
  return panels * groups * nr * group + 3 * panels * nr * 4 + c.m * 4 + (c.a.col != 1 ? c.m * c.k : 0);
}

KernelCall emit_quantized(const MatmulCall& c, const EmitContext& ctx) {
  const TensorType &ta = ctx.in_types[0], &tb = ctx.in_types[1];
  const TensorType& out = ctx.out_types[0];
  const Requantization r = requantization(static_cast<double>(ta.quantization.scale[0]) * tb.quantization.scale[0] /
                                          out.quantization.scale[0]);
  const std::pair<std::int32_t, std::int32_t> range = int32_range(out.dtype);  // captured below: no binding
  const std::int32_t lo = range.first, hi = range.second;
  auto layout = [](const Layout& l) { return cpp_int_list({l.batch, l.row, l.col}); };
  return {{"matmul_q8"},
          "{\n  static const long a_layout[] = " + layout(c.a) + ", b_layout[] = " + layout(c.b) +
              ", y_layout[] = " + layout(c.y) + ";\n  const HgMatmulQ8 q{" + int_str(ta.quantization.zero_point[0]) +
              ", " + int_str(tb.quantization.zero_point[0]) + ", " + int_str(r.multiplier) + ", " + int_str(r.shift) +
              ", " + int_str(out.quantization.zero_point[0]) + ", " + int_str(lo) + ", " + int_str(hi) +
              "};\n  hg_batch_matmul_q8<" + std::to_string(ctx.target.gemm_nr) + ">(" + ctx.in[0] + ", a_layout, " +
              ctx.in[1] + ", b_layout, " + ctx.out[0] + ", y_layout, " + std::to_string(c.channels) + ", " +
              std::to_string(c.batch) + ", " + std::to_string(c.m) + ", " + std::to_string(c.n) + ", " +
              std::to_string(c.k) + ", q, " + epilogue_argument(ctx) + ", " + ctx.scratch + ");\n}"};
}

std::string layout_cpp(const Layout& l) {
  return "HgMatrixLayout(" + std::to_string(l.batch) + ", " + std::to_string(l.row) + ", " + std::to_string(l.col) +
         ")";
}

KernelCall emit(const MatmulCall& c, const EmitContext& ctx) {
  if (!ctx.in_types[0].quantization.empty()) return emit_quantized(c, ctx);
  const std::string scratch = ctx.scratch.empty() ? "nullptr" : ctx.scratch;  // k == 0: nothing to pack
  return {{"epilogue", "gemm", "matmul"},
          "hg_batch_matmul(" + ctx.in[0] + ", " + layout_cpp(c.a) + ", " + ctx.in[1] + ", " + layout_cpp(c.b) + ", " +
              ctx.out[0] + ", " + layout_cpp(c.y) + ", " + std::to_string(c.channels) + ", " + std::to_string(c.batch) +
              ", " + std::to_string(c.m) + ", " + std::to_string(c.n) + ", " + std::to_string(c.k) + ", " + scratch +
              ", " + epilogue_argument(ctx) + ", " + ctx.pool + ");"};
}

// What hg_batch_matmul packs into: the right operand in panels of up to 16
// columns (the widest target's), and a left one with contiguous columns
// transposed.
int64_t matmul_scratch_floats(const MatmulCall& c) {
  return (c.n + 15) / 16 * 16 * c.k + (c.a.col != 1 ? c.m * c.k : 0);
}

double flops(const MatmulCall& c) { return 2.0 * static_cast<double>(c.batch * c.m * c.n * c.k); }

Attrs trans(bool ta, bool tb) {
  Attrs a;
  a.set("transpose_a", ta);
  a.set("transpose_b", tb);
  return a;
}

OpDef matmul_op(const std::string& name, MatmulCall (*call)(const Attrs&, const Shape&, const Shape&)) {
  OpDef d;
  d.name = name;
  d.input_names = {"lhs", "rhs"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = with_output_quantization({{"transpose_a", AttrKind::kBool, false, "use the left operand transposed", {}},
                                      {"transpose_b", AttrKind::kBool, false, "use the right operand transposed", {}},
                                      {"forward_stype", AttrKind::kString, std::string("None"), "ignored", {}}});
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = -1;
  d.reference = [call](const KernelIO& io) {
    run_any_reference(call(io.attrs, io.in_types[0].shape, io.in_types[1].shape), io);
  };
  d.reference_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  OpKernel cpp{[call](const EmitContext& ctx) {
    return emit(call(ctx.node.attrs, ctx.in_types[0].shape, ctx.in_types[1].shape), ctx);
  }};
  cpp.dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  cpp.scratch_bytes = [call](const KernelSite& site) -> int64_t {
    if (!site.in[0].quantization.empty())
      return matmul_q8_scratch_bytes(call(site.attrs, site.in[0].shape, site.in[1].shape), site.target);
    return matmul_scratch_floats(call(site.attrs, site.in[0].shape, site.in[1].shape)) * kFloatBytes;
  };
  register_kernel(Backend::kCpp, name, std::move(cpp));
  d.flops = [call](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return flops(call(a, in[0].shape, in[1].shape));
  };
  return d;
}

const OpRegistrar dot([] {
  OpDef d = matmul_op("dot", dot_call);
  d.summary = "matrix product (a's last axis with b's first)";
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const MatmulCall m = dot_call(a, in[0].shape, in[1].shape);
    Shape out;
    if (a.get_bool("transpose_a"))
      out = {m.m};
    else
      out.assign(in[0].shape.begin(), in[0].shape.end() - 1);
    out.push_back(m.n);
    return std::vector<TensorType>{matmul_output(a, in, out)};
  };
  // Tails of every kind: panels, register tiles, the GEMV path (m = 1),
  // more than one k block (k > 256).
  d.examples = {{trans(false, false), {{3, 4}, {4, 5}}},
                {trans(true, false), {{4, 3}, {4, 2}}},
                {trans(false, true), {{2, 3, 4}, {6, 4}}},
                {trans(true, true), {{5, 9}, {17, 5}}},
                {trans(false, false), {{1, 20}, {20, 35}}},
                {trans(false, true), {{13, 300}, {37, 300}}},
                // Quantized: both zero points, transposed operands, uint8.
                quantized_example(
                    with_output_quantization(trans(false, false), 0.2, -5),
                    {quantized_data({3, 4}, DType::kInt8, 0.05f, 3), quantized_data({4, 5}, DType::kInt8, 0.04f, -7)}),
                quantized_example(
                    with_output_quantization(trans(true, true), 0.3, 10),
                    {quantized_data({9, 5}, DType::kInt8, 0.03f, -20), quantized_data({7, 9}, DType::kInt8, 0.06f, 0)}),
                quantized_example(with_output_quantization(trans(false, true), 0.5, 128),
                                  {quantized_data({2, 3, 17}, DType::kUInt8, 0.02f, 128),
                                   quantized_data({6, 17}, DType::kUInt8, 0.03f, 120)})};
  return d;
}());

const OpRegistrar batch_dot([] {
  OpDef d = matmul_op("batch_dot", batch_call);
  d.summary = "batched matrix product (B, M, K) x (B, K, N)";
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const MatmulCall m = batch_call(a, in[0].shape, in[1].shape);
    return std::vector<TensorType>{matmul_output(a, in, {m.batch, m.m, m.n})};
  };
  d.examples = {{trans(false, false), {{2, 3, 4}, {2, 4, 5}}},
                {trans(false, true), {{3, 5, 8}, {3, 6, 8}}},
                {trans(true, false), {{2, 4, 3}, {2, 4, 2}}},
                {trans(true, true), {{2, 19, 37}, {2, 33, 19}}},
                {trans(false, false), {{2, 1, 24}, {2, 24, 40}}},
                {trans(false, true), {{2, 20, 16}, {2, 17, 16}}},
                // Quantized: attention's q k^T, and a product with the left operand transposed, uint8.
                quantized_example(with_output_quantization(trans(false, true), 0.25, -12),
                                  {quantized_data({2, 6, 8}, DType::kInt8, 0.04f, 2),
                                   quantized_data({2, 5, 8}, DType::kInt8, 0.05f, -9)}),
                quantized_example(with_output_quantization(trans(true, false), 0.1, 100),
                                  {quantized_data({3, 4, 3}, DType::kUInt8, 0.01f, 128),
                                   quantized_data({3, 4, 2}, DType::kUInt8, 0.02f, 110)})};
  return d;
}());

Attrs strided(int64_t batch, int64_t m, int64_t n, int64_t k, std::vector<int64_t> lhs, std::vector<int64_t> rhs,
              std::vector<int64_t> out, Shape out_shape) {
  Attrs a;
  a.set("batch", batch);
  a.set("m", m);
  a.set("n", n);
  a.set("k", k);
  a.set("lhs_strides", std::move(lhs));
  a.set("rhs_strides", std::move(rhs));
  a.set("out_strides", std::move(out));
  a.set("out_shape", std::move(out_shape));
  return a;
}

const OpRegistrar strided_batch_dot([] {
  OpDef d;
  d.name = "_strided_batch_dot";
  d.summary =
      "batched matrix product through explicit strides (made by "
      "fuse_strided_batch_dot)";
  d.input_names = {"lhs", "rhs"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = with_output_quantization(
      {{"batch", AttrKind::kInt, std::nullopt, "number of products", {}},
       {"m", AttrKind::kInt, std::nullopt, "rows of the left operand and of the result", {}},
       {"n", AttrKind::kInt, std::nullopt, "columns of the right operand and of the result", {}},
       {"k", AttrKind::kInt, std::nullopt, "the shared dimension", {}},
       {"lhs_strides", AttrKind::kInts, std::nullopt, "(batch, row, column) strides of the m x k matrices", {}},
       {"rhs_strides", AttrKind::kInts, std::nullopt, "(batch, row, column) strides of the k x n matrices", {}},
       {"out_strides", AttrKind::kInts, std::nullopt, "(batch, row, 1) strides of the m x n results", {}},
       {"out_shape", AttrKind::kInts, std::nullopt, "shape of the output tensor", {}}});
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = -1;
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const Shape out = a.get_ints("out_shape");
    check_strided_call(strided_call(a, out), in, out);
    return std::vector<TensorType>{matmul_output(a, in, out)};
  };
  d.reference = [](const KernelIO& io) { run_any_reference(strided_call(io.attrs, io.out_types[0].shape), io); };
  d.reference_dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  d.flops = [](const Attrs& a, const std::vector<TensorType>&, const std::vector<TensorType>& out) {
    return flops(strided_call(a, out[0].shape));
  };
  // Attention's layouts, 2 heads of 8 x 4 in (tokens, heads * 4): q k^T from
  // two projections, scores times v written back as (tokens, heads * 4);
  // a left operand with contiguous columns; tails of every kind.
  d.examples = {
      {strided(2, 8, 8, 4, {4, 8, 1}, {4, 1, 8}, {64, 8, 1}, {2, 8, 8}), {{1, 8, 8}, {1, 8, 8}}},
      {strided(2, 8, 4, 8, {64, 8, 1}, {4, 8, 1}, {4, 8, 1}, {1, 8, 8}), {{2, 8, 8}, {8, 8}}},
      {strided(3, 5, 7, 6, {5, 1, 15}, {42, 7, 1}, {35, 7, 1}, {3, 5, 7}), {{6, 15}, {3, 6, 7}}},
      {strided(2, 13, 19, 33, {33, 66, 1}, {19, 38, 1}, {19, 38, 1}, {13, 38}), {{13, 66}, {33, 38}}},
      // ONNX MatMul's broadcasting: a matrix against a stack (batch stride 0) on either side, a 1-D
      // left operand (m = 1, its axis dropped from the output).
      {strided(3, 4, 5, 6, {0, 6, 1}, {30, 5, 1}, {20, 5, 1}, {3, 4, 5}), {{4, 6}, {3, 6, 5}}},
      {strided(2, 5, 7, 3, {15, 3, 1}, {0, 1, 3}, {35, 7, 1}, {2, 5, 7}), {{2, 5, 3}, {7, 3}}},
      {strided(2, 1, 5, 4, {0, 4, 1}, {20, 5, 1}, {5, 5, 1}, {2, 5}), {{4}, {2, 4, 5}}},
      // Quantized: attention's q k^T through strides; uint8 with the left operand's columns contiguous.
      quantized_example(
          with_output_quantization(strided(2, 8, 8, 4, {4, 8, 1}, {4, 1, 8}, {64, 8, 1}, {2, 8, 8}), 0.15, 3),
          {quantized_data({1, 8, 8}, DType::kInt8, 0.05f, -1), quantized_data({1, 8, 8}, DType::kInt8, 0.05f, 6)}),
      quantized_example(
          with_output_quantization(strided(3, 5, 7, 6, {5, 1, 15}, {42, 7, 1}, {35, 7, 1}, {3, 5, 7}), 0.2, 120),
          {quantized_data({6, 15}, DType::kUInt8, 0.03f, 128), quantized_data({3, 6, 7}, DType::kUInt8, 0.02f, 100)})};
  return d;
}());

const KernelRegistrar strided_batch_dot_cpp(Backend::kCpp, "_strided_batch_dot", [] {
  OpKernel k{[](const EmitContext& ctx) { return emit(strided_call(ctx.node.attrs, ctx.out_types[0].shape), ctx); }};
  k.dtypes = {DType::kFloat32, DType::kInt8, DType::kUInt8};
  k.scratch_bytes = [](const KernelSite& site) -> int64_t {
    if (!site.in[0].quantization.empty())
      return matmul_q8_scratch_bytes(strided_call(site.attrs, site.out[0].shape), site.target);
    return matmul_scratch_floats(strided_call(site.attrs, site.out[0].shape)) * kFloatBytes;
  };
  return k;
}());

}  // namespace
}  // namespace hybgen
