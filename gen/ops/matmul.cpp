// dot and batch_dot: matrix products. dot takes a of any rank (its last axis,
// or its first with transpose_a on 2-D) against a 2-D b; batch_dot multiplies
// (B, M, K) by (B, K, N), each side optionally transposed. The generated
// kernel (templates/kernels/matmul.inc) packs the operands into arena scratch
// and runs the packed GEMM of gemm.inc, with elementwise successors (a scale,
// a mask) fused as its epilogue.
#include <cblas.h>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

struct MatmulDims {
  int64_t batch, m, n, k;
  bool ta, tb;
};

MatmulDims dot_dims(const Attrs& a, const Shape& sa, const Shape& sb) {
  const bool ta = a.get_bool("transpose_a"), tb = a.get_bool("transpose_b");
  if (sb.size() != 2) throw Error("dot needs a 2-D right operand, got " + shape_str(sb));
  if (ta && sa.size() != 2) throw Error("dot with transpose_a needs a 2-D left operand, got " + shape_str(sa));
  if (sa.empty()) throw Error("dot needs a left operand with at least one axis");
  MatmulDims d{1, 0, 0, 0, ta, tb};
  d.k = ta ? sa[0] : sa.back();
  d.m = ta ? sa[1] : dims_product(sa, 0, sa.size() - 1);
  const int64_t kb = tb ? sb[1] : sb[0];
  d.n = tb ? sb[0] : sb[1];
  if (kb != d.k) throw Error("inner sizes differ: " + shape_str(sa) + " and " + shape_str(sb));
  return d;
}

MatmulDims batch_dims(const Attrs& a, const Shape& sa, const Shape& sb) {
  const bool ta = a.get_bool("transpose_a"), tb = a.get_bool("transpose_b");
  if (sa.size() != 3 || sb.size() != 3 || sa[0] != sb[0])
    throw Error("batch_dot needs (B, M, K) and (B, K, N), got " + shape_str(sa) + " and " + shape_str(sb));
  MatmulDims d{sa[0], ta ? sa[2] : sa[1], tb ? sb[1] : sb[2], ta ? sa[1] : sa[2], ta, tb};
  if ((tb ? sb[2] : sb[1]) != d.k) throw Error("inner sizes differ: " + shape_str(sa) + " and " + shape_str(sb));
  return d;
}

void run_reference(const MatmulDims& d, const KernelIO& io) {
  for (int64_t b = 0; b < d.batch; ++b)
    cblas_sgemm(CblasRowMajor, d.ta ? CblasTrans : CblasNoTrans, d.tb ? CblasTrans : CblasNoTrans,
                static_cast<int>(d.m), static_cast<int>(d.n), static_cast<int>(d.k), 1.0f, io.in[0] + b * d.m * d.k,
                static_cast<int>(d.ta ? d.m : d.k), io.in[1] + b * d.k * d.n, static_cast<int>(d.tb ? d.k : d.n),
                0.0f, io.out[0] + b * d.m * d.n, static_cast<int>(d.n));
}

CppCall emit(const MatmulDims& d, const CppEmitContext& ctx) {
  const std::string scratch = ctx.scratch.empty() ? "nullptr" : ctx.scratch;  // k == 0: nothing to pack
  return {{"epilogue", "gemm", "matmul"},
          "hg_batch_matmul(" + ctx.in[0] + ", " + ctx.in[1] + ", " + ctx.out[0] + ", " + std::to_string(d.batch) + ", " +
              std::to_string(d.m) + ", " + std::to_string(d.n) + ", " + std::to_string(d.k) + ", " +
              (d.ta ? "true" : "false") + ", " + (d.tb ? "true" : "false") + ", " + scratch + ", " +
              epilogue_argument(ctx) + ", " + ctx.pool + ");"};
}

// What hg_batch_matmul packs into: the right operand in panels of up to 16
// columns (the widest target's), and the left one transposed.
int64_t scratch_floats(const MatmulDims& d) { return (d.n + 15) / 16 * 16 * d.k + (d.ta ? d.m * d.k : 0); }

Attrs trans(bool ta, bool tb) {
  Attrs a;
  a.set("transpose_a", ta);
  a.set("transpose_b", tb);
  return a;
}

OpDef matmul_op(const std::string& name, MatmulDims (*dims)(const Attrs&, const Shape&, const Shape&)) {
  OpDef d;
  d.name = name;
  d.input_names = {"lhs", "rhs"};
  d.min_inputs = d.max_inputs = 2;
  d.attrs = {{"transpose_a", AttrKind::kBool, false, "use the left operand transposed", {}},
             {"transpose_b", AttrKind::kBool, false, "use the right operand transposed", {}},
             {"forward_stype", AttrKind::kString, std::string("None"), "ignored", {}}};
  d.fusion = FusionClass::kOutElemwiseFusable;
  d.epilogue_axis = -1;
  d.scratch_floats = [dims](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    return scratch_floats(dims(a, in[0].shape, in[1].shape));
  };
  d.reference = [dims](const KernelIO& io) { run_reference(dims(io.attrs, io.in_types[0].shape, io.in_types[1].shape), io); };
  d.emit_cpp = [dims](const CppEmitContext& ctx) {
    return emit(dims(ctx.node.attrs, ctx.in_types[0].shape, ctx.in_types[1].shape), ctx);
  };
  d.flops = [dims](const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>&) {
    const MatmulDims m = dims(a, in[0].shape, in[1].shape);
    return 2.0 * static_cast<double>(m.batch * m.m * m.n * m.k);
  };
  return d;
}

const OpRegistrar dot([] {
  OpDef d = matmul_op("dot", dot_dims);
  d.summary = "matrix product (a's last axis with b's first)";
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const MatmulDims m = dot_dims(a, in[0].shape, in[1].shape);
    Shape out;
    if (m.ta) out = {m.m};
    else out.assign(in[0].shape.begin(), in[0].shape.end() - 1);
    out.push_back(m.n);
    return std::vector<TensorType>{TensorType{out, in[0].dtype}};
  };
  // Tails of every kind: panels, register tiles, the GEMV path (m = 1),
  // more than one k block (k > 256).
  d.examples = {{trans(false, false), {{3, 4}, {4, 5}}},
                {trans(true, false), {{4, 3}, {4, 2}}},
                {trans(false, true), {{2, 3, 4}, {6, 4}}},
                {trans(true, true), {{5, 9}, {17, 5}}},
                {trans(false, false), {{1, 20}, {20, 35}}},
                {trans(false, true), {{13, 300}, {37, 300}}}};
  return d;
}());

const OpRegistrar batch_dot([] {
  OpDef d = matmul_op("batch_dot", batch_dims);
  d.summary = "batched matrix product (B, M, K) x (B, K, N)";
  d.infer = [](const Attrs& a, const std::vector<TensorType>& in) {
    const MatmulDims m = batch_dims(a, in[0].shape, in[1].shape);
    return std::vector<TensorType>{TensorType{{m.batch, m.m, m.n}, in[0].dtype}};
  };
  d.examples = {{trans(false, false), {{2, 3, 4}, {2, 4, 5}}},
                {trans(false, true), {{3, 5, 8}, {3, 6, 8}}},
                {trans(true, false), {{2, 4, 3}, {2, 4, 2}}},
                {trans(true, true), {{2, 19, 37}, {2, 33, 19}}},
                {trans(false, false), {{2, 1, 24}, {2, 24, 40}}},
                {trans(false, true), {{2, 20, 16}, {2, 17, 16}}}};
  return d;
}());

}  // namespace
}  // namespace hybgen
