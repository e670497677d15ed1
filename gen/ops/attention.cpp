// _attention: out = softmax_over_keys((q k^T) * scale) v, per batch, made by
// the pass fuse_attention from attention's two products around a scale and
// a softmax (q k^T -> _mul_scalar -> softmax -> p v, each product a
// _strided_batch_dot or batch_dot), so that a backend with a fused kernel
// (templates/cuda/kernels/attention.inc, FlashAttention's online softmax)
// never stores the (batch, m, n) scores. Like _strided_batch_dot it reads its
// operands and writes its result through (batch, row, column) strides: q is
// batch x (m x d), k batch x (n x d), v batch x (n x dv), the output batch x
// (m x dv) with contiguous columns and each row within one run of the last
// axis (the epilogue's channel). Only backends that have a kernel for it get
// one (the pass asks find_kernel); the generic C++ backend runs the three
// kernels it replaces.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ir/error.h"
#include "ir/limits.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/reference_blas.h"

namespace hybgen {
namespace {

// Element (i, j) of matrix p at p * batch + i * row + j * col.
struct AttentionLayout {
  int64_t batch, row, col;
};

struct AttentionCall {
  int64_t batch, m, n, d, dv;
  AttentionLayout q, k, v, out;
  float scale;
};

AttentionLayout attention_layout_attr(const Attrs& a, const std::string& name) {
  const std::vector<int64_t> s = a.get_ints(name);
  if (s.size() != 3) throw Error(name + " needs 3 strides (batch, row, column), got " + std::to_string(s.size()));
  if (std::any_of(s.begin(), s.end(), [](int64_t x) { return x < 0; })) throw Error(name + " has a negative stride");
  return {s[0], s[1], s[2]};
}

AttentionCall attention_call(const Attrs& a) {
  return {a.get_int("batch"),
          a.get_int("m"),
          a.get_int("n"),
          a.get_int("d"),
          a.get_int("dv"),
          attention_layout_attr(a, "q_strides"),
          attention_layout_attr(a, "k_strides"),
          attention_layout_attr(a, "v_strides"),
          attention_layout_attr(a, "out_strides"),
          static_cast<float>(a.get_float("scale"))};
}

std::string attention_strides_str(const AttentionLayout& l) {
  return "(" + std::to_string(l.batch) + ", " + std::to_string(l.row) + ", " + std::to_string(l.col) + ")";
}

// (count - 1) * stride, or limit + 1 where that is past `limit` (hostile
// sizes do not overflow).
int64_t attention_span(int64_t count, int64_t stride, int64_t limit) {
  if (count <= 1 || stride == 0) return 0;
  return count - 1 > limit / stride ? limit + 1 : (count - 1) * stride;
}

// As _strided_batch_dot's operands: rows or columns of unit stride that do
// not overlap (what the reference's sgemm reads), inside the input.
void attention_check_operand(const std::string& name, const AttentionLayout& l, int64_t batch, int64_t rows,
                             int64_t cols, const TensorType& type) {
  const bool row_major = l.col == 1 && (rows == 1 || l.row >= cols);
  const bool col_major = l.row == 1 && (cols == 1 || l.col >= rows);
  if (!row_major && !col_major)
    throw Error(name + "_strides " + attention_strides_str(l) + " give " + std::to_string(rows) + " x " +
                std::to_string(cols) + " matrices neither rows nor columns of unit stride that do not overlap");
  const int64_t elements = type.num_elements();
  const int64_t last = attention_span(batch, l.batch, elements) + attention_span(rows, l.row, elements) +
                       attention_span(cols, l.col, elements);
  if (last >= elements)
    throw Error(name + "_strides " + attention_strides_str(l) + " read element " + std::to_string(last) + " of " +
                name + " " + shape_str(type.shape));
}

// The output as _strided_batch_dot writes its own: contiguous columns, each
// element once, each row within one run of the last axis.
void attention_check_output(const AttentionCall& c, const Shape& out) {
  if (std::any_of(out.begin(), out.end(), [](int64_t x) { return x < 1; }))
    throw Error("out_shape " + shape_str(out) + " has an axis below 1");
  checked_tensor_bytes(out, 1, "_attention's out_shape");  // at most 2^31 - 1 elements: no product below overflows
  // m and dv are bounded by q's and v's sizes (checked first), batch is not.
  const int64_t per_matrix = c.m * c.dv;
  if (out.empty() || num_elements(out) % per_matrix != 0 || num_elements(out) / per_matrix != c.batch)
    throw Error("out_shape " + shape_str(out) + " does not hold " + std::to_string(c.batch) + " x " +
                std::to_string(c.m) + " x " + std::to_string(c.dv) + " values");
  if (c.out.col != 1) throw Error("out_strides " + attention_strides_str(c.out) + " need a unit column stride");
  if ((c.batch > 1 && c.out.batch >= num_elements(out)) || (c.m > 1 && c.out.row >= num_elements(out)))
    throw Error("out_strides " + attention_strides_str(c.out) + " write past the output " + shape_str(out));
  const int64_t channels = out.back();
  if (c.out.row % channels != 0 && c.m > 1)
    throw Error("out_strides' row stride must be a multiple of the last axis (" + std::to_string(channels) + ")");
  std::vector<bool> written(static_cast<std::size_t>(num_elements(out)), false);
  for (int64_t p = 0; p < c.batch; ++p) {
    if (p * c.out.batch % channels + c.dv > channels)
      throw Error("out_strides puts a row of matrix " + std::to_string(p) + " across the last axis");
    for (int64_t i = 0; i < c.m; ++i)
      for (int64_t j = 0; j < c.dv; ++j) {
        const int64_t at = p * c.out.batch + i * c.out.row + j;
        if (at >= static_cast<int64_t>(written.size()) || written[static_cast<std::size_t>(at)])
          throw Error("out_strides " + attention_strides_str(c.out) + " do not write each output element once");
        written[static_cast<std::size_t>(at)] = true;
      }
  }
}

std::vector<TensorType> attention_infer(const Attrs& a, const std::vector<TensorType>& in) {
  const AttentionCall c = attention_call(a);
  if (c.batch < 1 || c.m < 1 || c.n < 1 || c.d < 1 || c.dv < 1) throw Error("batch, m, n, d and dv must be positive");
  if (!std::isfinite(c.scale)) throw Error("scale must be finite");
  const char* names[] = {"q", "k", "v"};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!in[i].quantization.empty() || !is_float_dtype(in[i].dtype) || in[i].dtype == DType::kFloat64)
      throw Error(std::string(names[i]) + " must be float32 (or its half storage), not " + in[i].str());
    if (in[i].dtype != in[0].dtype) throw Error(std::string(names[i]) + " is " + in[i].str() + " but q " + in[0].str());
  }
  attention_check_operand("q", c.q, c.batch, c.m, c.d, in[0]);
  attention_check_operand("k", c.k, c.batch, c.n, c.d, in[1]);
  attention_check_operand("v", c.v, c.batch, c.n, c.dv, in[2]);
  const Shape out = a.get_ints("out_shape");
  attention_check_output(c, out);
  return {TensorType{out, in[0].dtype}};
}

// op(A) and leading dimension of a matrix of `l`, as reference_sgemm takes
// it (row-major): a unit column stride untransposed, a unit row stride
// transposed; at least the stored rows' length, as BLAS wants.
bool attention_transposed(const AttentionLayout& l) { return l.col != 1; }
int attention_leading(const AttentionLayout& l, int64_t cols, int64_t rows) {
  return static_cast<int>(std::max(l.col == 1 ? l.row : l.col, l.col == 1 ? cols : rows));
}

// Per matrix: scores = q k^T (sgemm), scaled, softmax per row in double,
// then out = p v (sgemm) straight into the output through its row stride.
void attention_reference(const KernelIO& io) {
  const AttentionCall c = attention_call(io.attrs);
  const int m = static_cast<int>(c.m), n = static_cast<int>(c.n), d = static_cast<int>(c.d),
            dv = static_cast<int>(c.dv);
  std::vector<float> p(static_cast<std::size_t>(c.m * c.n));
  for (int64_t b = 0; b < c.batch; ++b) {
    // k^T as the right operand: K(j, kk) at j * row + kk * col is B(kk, j).
    reference_sgemm(attention_transposed(c.q), !attention_transposed(c.k), m, n, d, io.input<float>(0) + b * c.q.batch,
                    attention_leading(c.q, c.d, c.m), io.input<float>(1) + b * c.k.batch,
                    attention_leading(c.k, c.d, c.n), p.data(), n);
    for (int64_t i = 0; i < c.m; ++i) {
      float* row = p.data() + i * c.n;
      double top = -INFINITY;
      for (int64_t j = 0; j < c.n; ++j) top = std::max(top, static_cast<double>(row[j]) * c.scale);
      double sum = 0;
      for (int64_t j = 0; j < c.n; ++j) sum += std::exp(static_cast<double>(row[j]) * c.scale - top);
      for (int64_t j = 0; j < c.n; ++j)
        row[j] = static_cast<float>(std::exp(static_cast<double>(row[j]) * c.scale - top) / sum);
    }
    reference_sgemm(false, attention_transposed(c.v), m, dv, n, p.data(), n, io.input<float>(2) + b * c.v.batch,
                    attention_leading(c.v, c.dv, c.n), io.output<float>(0) + b * c.out.batch,
                    static_cast<int>(std::max(c.out.row, c.dv)));
  }
}

double attention_flops(const Attrs& a, const std::vector<TensorType>&, const std::vector<TensorType>&) {
  const AttentionCall c = attention_call(a);
  // Two products and the softmax's max, exp, sum and scale per score.
  return static_cast<double>(c.batch) * static_cast<double>(c.m) * static_cast<double>(c.n) *
         (2.0 * static_cast<double>(c.d + c.dv) + 5.0);
}

Attrs attention_attrs(int64_t batch, int64_t m, int64_t n, int64_t d, int64_t dv, std::vector<int64_t> q,
                      std::vector<int64_t> k, std::vector<int64_t> v, std::vector<int64_t> out, Shape out_shape,
                      double scale) {
  Attrs a;
  a.set("batch", batch);
  a.set("m", m);
  a.set("n", n);
  a.set("d", d);
  a.set("dv", dv);
  a.set("q_strides", std::move(q));
  a.set("k_strides", std::move(k));
  a.set("v_strides", std::move(v));
  a.set("out_strides", std::move(out));
  a.set("out_shape", std::move(out_shape));
  a.set("scale", scale);
  return a;
}

const OpRegistrar attention_reg([] {
  OpDef d;
  d.name = "_attention";
  d.summary = "softmax((q k^T) * scale) v through explicit strides (made by fuse_attention)";
  d.input_names = {"q", "k", "v"};
  d.min_inputs = d.max_inputs = 3;
  d.attrs = {{"batch", AttrKind::kInt, std::nullopt, "number of (query, key, value) matrix triples", {}},
             {"m", AttrKind::kInt, std::nullopt, "queries: rows of q and of the result", {}},
             {"n", AttrKind::kInt, std::nullopt, "keys: rows of k and v", {}},
             {"d", AttrKind::kInt, std::nullopt, "columns of q and k", {}},
             {"dv", AttrKind::kInt, std::nullopt, "columns of v and of the result", {}},
             {"q_strides", AttrKind::kInts, std::nullopt, "(batch, row, column) strides of the m x d queries", {}},
             {"k_strides", AttrKind::kInts, std::nullopt, "(batch, row, column) strides of the n x d keys", {}},
             {"v_strides", AttrKind::kInts, std::nullopt, "(batch, row, column) strides of the n x dv values", {}},
             {"out_strides", AttrKind::kInts, std::nullopt, "(batch, row, 1) strides of the m x dv results", {}},
             {"out_shape", AttrKind::kInts, std::nullopt, "shape of the output tensor", {}},
             {"scale", AttrKind::kFloat, 1.0, "multiplies the scores before the softmax", {}}};
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = -1;
  d.infer = attention_infer;
  d.reference = attention_reference;
  d.flops = attention_flops;
  // Scores of about unit size: each example's scale is near 1 / sqrt(d)
  // times the inputs' spread, so no softmax is one-hot.
  d.examples = {
      // The transformer's layout: 2 heads of 64 interleaved in (1, 33, 128) projections, written back so.
      {attention_attrs(2, 33, 33, 64, 64, {64, 128, 1}, {64, 128, 1}, {64, 128, 1}, {64, 128, 1}, {1, 33, 128}, 0.125),
       {{1, 33, 128}, {1, 33, 128}, {1, 33, 128}}},
      // Contiguous, d != dv, d not a multiple of 4, keys over two tiles and a tail (70).
      {attention_attrs(3, 7, 70, 13, 24, {91, 13, 1}, {910, 13, 1}, {1680, 24, 1}, {168, 24, 1}, {3, 7, 24}, 0.3),
       {{3, 7, 13}, {3, 70, 13}, {3, 70, 24}}},
      // One query, one key.
      {attention_attrs(1, 1, 1, 5, 3, {5, 5, 1}, {5, 5, 1}, {3, 3, 1}, {3, 3, 1}, {1, 3}, 0.5),
       {{1, 5}, {1, 5}, {1, 3}}},
      // k and v shared by every batch (stride 0), k stored transposed (its keys are columns).
      {attention_attrs(2, 9, 33, 16, 8, {144, 16, 1}, {0, 1, 33}, {0, 8, 1}, {72, 8, 1}, {2, 9, 8}, 0.25),
       {{2, 9, 16}, {16, 33}, {33, 8}}},
      // A head size of 128 (the kernel's larger tiles), queries past one tile.
      {attention_attrs(1, 17, 7, 128, 128, {0, 128, 1}, {0, 128, 1}, {0, 128, 1}, {0, 128, 1}, {17, 128}, 0.09),
       {{17, 128}, {7, 128}, {7, 128}}},
      // Head sizes between the kernel's tiles (65 and 100), q stored transposed.
      {attention_attrs(2, 5, 40, 65, 100, {325, 1, 5}, {2600, 65, 1}, {4000, 100, 1}, {500, 100, 1}, {2, 5, 100}, 0.12),
       {{2, 65, 5}, {2, 40, 65}, {2, 40, 100}}},
      // Enough rows for the CUDA kernel's larger blocks, which it takes only where they still make 132 of
      // them (the examples above take 2 rows a warp): 8 rows a warp; 4 at small heads; 4 at heads over 64.
      {attention_attrs(132, 3, 5, 8, 8, {24, 8, 1}, {40, 8, 1}, {40, 8, 1}, {24, 8, 1}, {132, 3, 8}, 0.5),
       {{132, 3, 8}, {132, 5, 8}, {132, 5, 8}}},
      {attention_attrs(66, 32, 2, 8, 4, {256, 8, 1}, {0, 8, 1}, {8, 4, 1}, {128, 4, 1}, {66, 32, 4}, 0.5),
       {{66, 32, 8}, {2, 8}, {66, 2, 4}}},
      {attention_attrs(132, 2, 3, 72, 40, {144, 72, 1}, {216, 72, 1}, {120, 40, 1}, {80, 40, 1}, {132, 2, 40}, 0.15),
       {{132, 2, 72}, {132, 3, 72}, {132, 3, 40}}},
  };
  return d;
}());

}  // namespace
}  // namespace hybgen
