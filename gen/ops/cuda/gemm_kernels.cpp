// The CUDA kernels of FullyConnected, dot, batch_dot and _strided_batch_dot:
// templates/cuda/kernels/gemm.inc's tiled SGEMM (hg_gemm) or, for at most 8
// output rows per product (a dense layer at batch 1), its GEMV (hg_gemv).
// The tile configuration and the split-K factor are chosen here per shape
// (cuda_gemm_plan, shared with conv_kernels.cpp); split-K takes scratch.
// Operands are read in place through their layouts (transposes and
// _strided_batch_dot's views cost nothing); the epilogue's channel is the
// output's last axis. Activations, weights, bias and output share one
// storage type (float32, or float16 / bfloat16 under --precision fp16 /
// bf16, the pass half_storage), the sums FP32 and split-K's partial sums
// float.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

// The tile configuration of gemm.inc (0: 128x128, 1: 64x64, 2: 32x32, 3:
// 64x128, 4: 128x64) and the split-K factor for `batch` products of m x n
// over k, by a small cost model of an H100 (132 SMs): blocks per SM, each
// configuration's relative speed, a partly idle SM running below its rate,
// and split-K's extra launch and partial sums. `gather` (the implicit
// convolution): not configuration 0, which spills with the gather. At
// Precision::kTF32 (float32 storage), and with float16 / bfloat16 storage
// (Precision::kFP16 / kBF16), configurations 0, 3 and 4 launch the
// tensor-core kernels, all 128x128 tiles: the mma.sync kernel (or, with the
// gather, wmma), at their speed relative to the FP32 tile's on large
// products (docs/cuda.md#precision). The FP16 / BF16 weights are twice
// TF32's: an H100's or H200's dense FP16 and BF16 tensor-core rate is twice
// its TF32 rate, and the half kernels move half the bytes per mma through
// shared memory; an assumption of the model, not a measurement.
void cuda_gemm_plan(int64_t batch, int64_t m, int64_t n, int64_t k, bool gather, Precision precision, int* config,
                    int* splits) {
  struct Cfg {
    int id;
    int64_t bm, bn;
    double occupancy, speed;
  };
  static const Cfg fp32[] = {
      {0, 128, 128, 2, 1.0}, {3, 64, 128, 3, 0.85}, {4, 128, 64, 3, 0.85}, {1, 64, 64, 4, 0.7}, {2, 32, 32, 8, 0.4}};
  static const Cfg tf32[] = {{0, 128, 128, 2, 3.2}, {1, 64, 64, 4, 0.7}, {2, 32, 32, 8, 0.4}};
  static const Cfg tf32_gather[] = {{4, 128, 128, 2, 1.6}, {1, 64, 64, 4, 0.7}, {2, 32, 32, 8, 0.4}};
  static const Cfg half[] = {{0, 128, 128, 2, 6.4}, {1, 64, 64, 4, 0.7}, {2, 32, 32, 8, 0.4}};
  static const Cfg half_gather[] = {{4, 128, 128, 2, 3.2}, {1, 64, 64, 4, 0.7}, {2, 32, 32, 8, 0.4}};
  const Cfg* first = fp32;
  const Cfg* last = std::end(fp32);
  if (precision == Precision::kTF32) {
    first = gather ? tf32_gather : tf32;
    last = gather ? std::end(tf32_gather) : std::end(tf32);
  } else if (precision == Precision::kFP16 || precision == Precision::kBF16) {
    first = gather ? half_gather : half;
    last = gather ? std::end(half_gather) : std::end(half);
  }
  static const int split_choices[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32};
  const double kSms = 132, kSmRate = 128 * 1.7e9, kLaunch = 2e-6, kBandwidth = 2.5e12;
  const int64_t ktiles = std::max<int64_t>(1, (k + 15) / 16);
  double best = -1;
  *splits = 1;
  *config = gather ? 4 : 0;
  for (const Cfg* c_at = first; c_at != last; ++c_at)
    for (int s : split_choices) {
      const Cfg& c = *c_at;
      if (gather && c.id == 0) continue;
      if (s > 1 && (k / s < 64 || s > ktiles)) continue;
      const double tiles = static_cast<double>(batch) * static_cast<double>((m + c.bm - 1) / c.bm) *
                           static_cast<double>((n + c.bn - 1) / c.bn);
      const double per_sm = std::ceil(tiles * s / kSms);
      const double ks = static_cast<double>((ktiles + s - 1) / s * 16);
      const double util = std::min(1.0, 0.5 + 0.5 * per_sm / c.occupancy);
      double t = per_sm * static_cast<double>(c.bm * c.bn) * ks / (c.speed * kSmRate * util);
      if (s > 1) t += kLaunch + 2.0 * s * static_cast<double>(batch * m * n) * 4 / kBandwidth;
      if (best < 0 || t < best) {
        best = t;
        *config = c.id;
        *splits = s;
      }
    }
}

// What the tiles of a GEMM whose output is `dtype` run on under the
// target's --precision: its FP16 / BF16 tensor cores for half storage,
// TF32's for float32 storage at kTF32, FP32 otherwise (a float32 node of an
// fp16 model runs the FP32 tiles).
Precision cuda_gemm_precision(Precision target, DType dtype) {
  if (dtype == DType::kFloat16) return Precision::kFP16;
  if (dtype == DType::kBFloat16) return Precision::kBF16;
  return target == Precision::kTF32 ? Precision::kTF32 : Precision::kFP32;
}

// The split-K scratch as the kernels take it: float partial sums, whatever
// the storage type of the kernel's other pointers (the plan hands half
// kernels a pointer of their own type).
std::string cuda_partial_pointer(const std::string& scratch, DType dtype) {
  if (is_half_dtype(dtype)) return "reinterpret_cast<float*>(" + scratch + ")";
  return scratch;
}

namespace {

// One product as the kernels take it (see gemm.inc): A(i, k) at a + p*a_sb
// + (am 0: i*a_ld + k; am 1: k*a_ld + i), B(k, j) at b + p*b_sb + (bm 0:
// j*b_ld + k; bm 1: k*b_ld + j), C(i, j) at c + p*c_sb + i*c_ld + j.
struct Gemm {
  int64_t batch, m, n, k;
  int am;
  int64_t a_ld, a_sb;
  int bm;
  int64_t b_ld, b_sb;
  int64_t c_ld, c_sb, channels;
};

Gemm contiguous(int64_t batch, int64_t m, int64_t n, int64_t k, bool ta, bool tb) {
  Gemm g{batch, m, n, k, 0, 0, m * k, 0, 0, k * n, n, m * n, n};
  g.am = ta ? 1 : 0;
  g.a_ld = ta ? m : k;
  g.bm = tb ? 0 : 1;
  g.b_ld = tb ? k : n;
  return g;
}

Gemm fully_connected(const Attrs& a, const Shape& data) {
  if (data.empty()) throw Error("data must have at least one axis");
  const int64_t hidden = a.get_int("num_hidden");
  int64_t rows = 0, k = 0;
  if (a.get_bool("flatten")) {
    rows = data[0];
    k = dims_product(data, 1, data.size());
  } else {
    rows = dims_product(data, 0, data.size() - 1);
    k = data.back();
  }
  // y = x W^T: B(k, j) = W[j, k], K contiguous.
  return Gemm{1, rows, hidden, k, 0, k, rows * k, 0, k, hidden * k, hidden, rows * hidden, hidden};
}

Gemm dot(const Attrs& a, const Shape& sa, const Shape& sb) {
  const bool ta = a.get_bool("transpose_a"), tb = a.get_bool("transpose_b");
  if (sb.size() != 2 || sa.empty() || (ta && sa.size() != 2)) throw Error("dot: unexpected operand shapes");
  const int64_t k = ta ? sa[0] : sa.back();
  const int64_t m = ta ? sa[1] : dims_product(sa, 0, sa.size() - 1);
  const int64_t n = tb ? sb[0] : sb[1];
  return contiguous(1, m, n, k, ta, tb);
}

Gemm batch_dot(const Attrs& a, const Shape& sa, const Shape& sb) {
  const bool ta = a.get_bool("transpose_a"), tb = a.get_bool("transpose_b");
  if (sa.size() != 3 || sb.size() != 3) throw Error("batch_dot: unexpected operand shapes");
  const int64_t m = ta ? sa[2] : sa[1], k = ta ? sa[1] : sa[2], n = tb ? sb[1] : sb[2];
  return contiguous(sa[0], m, n, k, ta, tb);
}

Gemm strided_batch_dot(const Attrs& a, const Shape& out) {
  const std::vector<int64_t> l = a.get_ints("lhs_strides"), r = a.get_ints("rhs_strides"),
                             o = a.get_ints("out_strides");
  if (l.size() != 3 || r.size() != 3 || o.size() != 3 || out.empty())
    throw Error("_strided_batch_dot: strides need 3 values");
  Gemm g{a.get_int("batch"), a.get_int("m"), a.get_int("n"), a.get_int("k"), 0, 0, l[0], 0, 0, r[0], o[1], o[0],
         out.back()};
  // A(i, kk) at i*l[1] + kk*l[2]; B(kk, j) at kk*r[1] + j*r[2].
  if (l[2] == 1) {
    g.am = 0;
    g.a_ld = l[1];
  } else {
    g.am = 1;
    g.a_ld = l[2];
  }
  if (r[2] == 1) {
    g.bm = 1;
    g.b_ld = r[1];
  } else {
    g.bm = 0;
    g.b_ld = r[2];
  }
  return g;
}

bool use_gemv(const Gemm& g) { return g.m <= 8; }

int gemv_rows(int64_t m) { return m <= 1 ? 1 : m <= 2 ? 2 : m <= 4 ? 4 : 8; }

int64_t scratch_of(const Gemm& g, Precision precision) {  // precision: cuda_gemm_precision's
  if (use_gemv(g)) return 0;
  int config = 0, splits = 1;
  cuda_gemm_plan(g.batch, g.m, g.n, g.k, false, precision, &config, &splits);
  return splits > 1 ? int64_t{splits} * g.batch * g.m * g.n * kFloatBytes : 0;
}

KernelCall emit(const Gemm& g, const EmitContext& ctx, const std::string& bias) {
  const std::string operands = ctx.in[0] + ", " + int_str(g.a_ld) + ", " + int_str(g.a_sb) + ", " + ctx.in[1] + ", " +
                               int_str(g.b_ld) + ", " + int_str(g.b_sb) + ", " + bias + ", " + ctx.out[0] + ", " +
                               int_str(g.c_ld) + ", " + int_str(g.c_sb) + ", " + int_str(g.channels) + ", " +
                               int_str(g.batch) + ", " + int_str(g.m) + ", " + int_str(g.n) + ", " + int_str(g.k) +
                               ", ";
  const std::string layouts = int_str(g.am) + ", " + int_str(g.bm);
  if (use_gemv(g))
    return {{"gemm"},
            "HG_CHECK((hg_gemv<" + int_str(gemv_rows(g.m)) + ", " + layouts + ">(" + ctx.stream + ", " + operands +
                epilogue_argument(ctx) + ")));"};
  int config = 0, splits = 1;
  const DType dtype = ctx.out_types[0].dtype;
  cuda_gemm_plan(g.batch, g.m, g.n, g.k, false, cuda_gemm_precision(ctx.target.precision, dtype), &config, &splits);
  const bool scratch =
      splits > 1 && !ctx.scratch.empty() && ctx.scratch_bytes >= splits * g.batch * g.m * g.n * kFloatBytes;
  const std::string split_k = scratch ? "" : ", false";  // no reduction kernel to compile
  return {{"gemm"},
          "HG_CHECK((hg_gemm<" + int_str(config) + ", " + layouts + split_k + ">(" + ctx.stream + ", " + operands +
              int_str(scratch ? splits : 1) + ", " +
              (scratch ? cuda_partial_pointer(ctx.scratch, dtype) : std::string("nullptr")) + ", " +
              epilogue_argument(ctx) + ")));"};
}

void check_unpacked(const EmitContext& ctx) {
  if (ctx.in_packed.size() > 1 && ctx.in_packed[1])
    throw Error("the CUDA GEMM reads weights as given: " + ctx.node.op + " got packed ones");
}

// The CUDA kernel of an op that is one GEMM problem, `problem(attrs, in, out)`.
template <class Problem>
OpKernel gemm_kernel(Problem problem, bool has_bias) {
  OpKernel k{[problem, has_bias](const EmitContext& ctx) {
    check_unpacked(ctx);
    const std::string bias = has_bias && ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
    return emit(problem(ctx.node.attrs, ctx.in_types, ctx.out_types), ctx, bias);
  }};
  k.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};  // the storage types of gemm.inc
  k.scratch_bytes = [problem](const KernelSite& site) {
    return scratch_of(problem(site.attrs, site.in, site.out),
                      cuda_gemm_precision(site.target.precision, site.out[0].dtype));
  };
  return k;
}

using Types = std::vector<TensorType>;

const KernelRegistrar fc(
    Backend::kCuda, "FullyConnected",
    gemm_kernel([](const Attrs& a, const Types& in, const Types&) { return fully_connected(a, in[0].shape); }, true));
const KernelRegistrar dot_reg(
    Backend::kCuda, "dot",
    gemm_kernel([](const Attrs& a, const Types& in, const Types&) { return dot(a, in[0].shape, in[1].shape); }, false));
const KernelRegistrar batch_dot_reg(Backend::kCuda, "batch_dot",
                                    gemm_kernel([](const Attrs& a, const Types& in,
                                                   const Types&) { return batch_dot(a, in[0].shape, in[1].shape); },
                                                false));
const KernelRegistrar strided_reg(Backend::kCuda, "_strided_batch_dot",
                                  gemm_kernel([](const Attrs& a, const Types&,
                                                 const Types& out) { return strided_batch_dot(a, out[0].shape); },
                                              false));

}  // namespace
}  // namespace hybgen
