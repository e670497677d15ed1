// The CUDA kernel of Convolution. 3-D (NCDHW): the direct kernel of
// conv3d.inc. 1-D (NCW) comes as 2-D of height 1 (conv_geometry). 2-D
// (NCHW), by the first that applies:
//   - depthwise (groups = channels = filters): hg_depthwise_conv2d
//     (templates/cuda/kernels/depthwise.inc, another file's);
//   - a 1x1 convolution on a 1x1 map: a dense layer, y[n x f] = x W^T
//     (gemm.inc's hg_gemv at batch <= 8, else hg_gemm);
//   - 1x1, stride 1, unpadded, one image: the input read directly as the
//     GEMM's B (conv.inc's hg_conv2d_1x1, float4 loads);
//   - everything else: implicit GEMM per group, the input gathered with its
//     padding into the B tiles on the fly (conv.inc's hg_conv2d_gemm), the
//     kernel size a template argument.
// Tile configuration and split-K come from cuda_gemm_plan (gemm_kernels.cpp);
// split-K takes scratch. The epilogue's channel is the filter. Every path
// takes float32, float16 and bfloat16 storage (input, weights, bias and
// output of one type), but the depthwise one, whose kernel is float32 only:
// a half-storage depthwise convolution runs as the implicit GEMM of its
// groups.
#include <cstdint>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/conv_geometry.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

void cuda_gemm_plan(int64_t batch, int64_t m, int64_t n, int64_t k, bool gather, Precision precision, int* config,
                    int* splits);
Precision cuda_gemm_precision(Precision target, DType dtype);
std::string cuda_partial_pointer(const std::string& scratch, DType dtype);

namespace {

enum class Path { kDepthwise, kDense, kDirect1x1, kImplicit, kDirect3d };

Path path_of(const ConvGeometry& g, DType) {
  if (g.spatial == 3) return Path::kDirect3d;
  if (g.groups == g.c && g.f == g.c && g.groups > 1) return Path::kDepthwise;
  const bool one_by_one = g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0 &&
                          g.ph_end == 0 && g.pw_end == 0;
  if (one_by_one && g.groups == 1 && g.h == 1 && g.w == 1) return Path::kDense;
  if (one_by_one && g.n == 1) return Path::kDirect1x1;
  return Path::kImplicit;
}

// The GEMM each path runs: products, m, n, k.
struct Shape4 {
  int64_t batch, m, n, k;
};

Shape4 gemm_shape(const ConvGeometry& g, Path path) {
  const int64_t cg = g.c / g.groups, fg = g.f / g.groups;
  switch (path) {
    case Path::kDense:
      return {1, g.n, g.f, g.c};
    case Path::kDirect1x1:
      return {g.n * g.groups, fg, g.h * g.w, cg};
    default:
      return {g.groups, fg, g.n * g.oh * g.ow, cg * g.kh * g.kw};
  }
}

bool dense_gemv(const ConvGeometry& g) { return g.n <= 8; }

// Split-K floats (0: none).
int64_t partial_floats(const ConvGeometry& g, Path path, Precision precision) {  // cuda_gemm_precision's
  if (path == Path::kDepthwise || path == Path::kDirect3d || (path == Path::kDense && dense_gemv(g))) return 0;
  const Shape4 s = gemm_shape(g, path);
  int config = 0, splits = 1;
  cuda_gemm_plan(s.batch, s.m, s.n, s.k, path == Path::kImplicit, precision, &config, &splits);
  return splits > 1 ? splits * s.batch * s.m * s.n : 0;
}

KernelCall emit(const EmitContext& ctx) {
  if (ctx.in_packed.size() > 1 && ctx.in_packed[1])
    throw Error("the CUDA convolution reads weights as given: Convolution got packed ones");
  const ConvGeometry g = conv_geometry(ctx.node.attrs, ctx.in_types[0].shape);
  const std::string x = ctx.in[0], w = ctx.in[1], y = ctx.out[0];
  const std::string bias = ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
  const std::string epilogue = epilogue_argument(ctx);
  const DType dtype = ctx.out_types[0].dtype;
  const Path path = path_of(g, dtype);
  const Precision precision = cuda_gemm_precision(ctx.target.precision, dtype);
  if (path == Path::kDirect3d) {
    const std::vector<int64_t> geo{g.n,  g.c,  g.d,  g.h,  g.w,  g.f,  g.kd, g.kh, g.kw, g.od, g.oh,
                                   g.ow, g.sd, g.sh, g.sw, g.pd, g.ph, g.pw, g.dd, g.dh, g.dw, g.groups};
    std::string list;
    for (int64_t v : geo) list += (list.empty() ? "" : ", ") + int_str(v) + "L";
    return {{"conv3d"}, "HG_CHECK(hg_conv3d(" + ctx.stream + ", " + x + ", " + w + ", " + bias + ", " + y +
                            ", HgConv3dGeometry{{" + list + "}}, " + epilogue + "));"};
  }
  if (path == Path::kDepthwise)
    return {{"depthwise"},
            "HG_CHECK(hg_depthwise_conv2d(" + ctx.stream + ", " + x + ", " + w + ", " + bias + ", " + y + ", " +
                int_str(g.n) + ", " + int_str(g.c) + ", " + int_str(g.h) + ", " + int_str(g.w) + ", " + int_str(g.oh) +
                ", " + int_str(g.ow) + ", " + int_str(g.kh) + ", " + int_str(g.kw) + ", " + int_str(g.sh) + ", " +
                int_str(g.sw) + ", " + int_str(g.ph) + ", " + int_str(g.pw) + ", " + int_str(g.dh) + ", " +
                int_str(g.dw) + ", " + epilogue + "));"};
  if (path == Path::kDense) {
    // y[img, f] = sum_c x[img, c] W[f, c]: B K-contiguous, channel = column.
    const std::string operands = x + ", " + int_str(g.c) + ", 0, " + w + ", " + int_str(g.c) + ", 0, " + bias + ", " +
                                 y + ", " + int_str(g.f) + ", 0, " + int_str(g.f) + ", 1, " + int_str(g.n) + ", " +
                                 int_str(g.f) + ", " + int_str(g.c) + ", ";
    if (dense_gemv(g)) {
      const int64_t mr = g.n <= 1 ? 1 : g.n <= 2 ? 2 : g.n <= 4 ? 4 : 8;
      return {{"gemm"},
              "HG_CHECK((hg_gemv<" + int_str(mr) + ", 0, 0>(" + ctx.stream + ", " + operands + epilogue + ")));"};
    }
  }
  const Shape4 s = gemm_shape(g, path);
  int config = 0, splits = 1;
  cuda_gemm_plan(s.batch, s.m, s.n, s.k, path == Path::kImplicit, precision, &config, &splits);
  const int64_t need = partial_floats(g, path, precision);
  const bool scratch = need > 0 && !ctx.scratch.empty() && ctx.scratch_bytes >= need * kFloatBytes;
  const std::string split_args = int_str(scratch ? splits : 1) + ", " +
                                 (scratch ? cuda_partial_pointer(ctx.scratch, dtype) : std::string("nullptr"));
  const std::string split_k = scratch ? "" : ", false";  // no reduction kernel to compile
  if (path == Path::kDense)
    return {{"gemm"},
            "HG_CHECK((hg_gemm<" + int_str(config) + ", 0, 0" + split_k + ">(" + ctx.stream + ", " + x + ", " +
                int_str(g.c) + ", 0, " + w + ", " + int_str(g.c) + ", 0, " + bias + ", " + y + ", " + int_str(g.f) +
                ", 0, " + int_str(g.f) + ", 1, " + int_str(g.n) + ", " + int_str(g.f) + ", " + int_str(g.c) + ", " +
                split_args + ", " + epilogue + ")));"};
  if (path == Path::kDirect1x1)
    return {{"gemm", "conv"},
            "HG_CHECK((hg_conv2d_1x1<" + int_str(config) + split_k + ">(" + ctx.stream + ", " + x + ", " + w + ", " +
                bias + ", " + y + ", " + int_str(g.n) + ", " + int_str(g.c) + ", " + int_str(g.h * g.w) + ", " +
                int_str(g.f) + ", " + int_str(g.groups) + ", " + split_args + ", " + epilogue + ")));"};
  return {{"gemm", "conv"},
          "HG_CHECK((hg_conv2d_gemm<" + int_str(config) + ", " + int_str(g.kh) + ", " + int_str(g.kw) + split_k + ">(" +
              ctx.stream + ", " + x + ", " + w + ", " + bias + ", " + y + ", " + int_str(g.n) + ", " + int_str(g.c) +
              ", " + int_str(g.h) + ", " + int_str(g.w) + ", " + int_str(g.f) + ", " + int_str(g.oh) + ", " +
              int_str(g.ow) + ", " + int_str(g.sh) + ", " + int_str(g.sw) + ", " + int_str(g.ph) + ", " +
              int_str(g.pw) + ", " + int_str(g.dh) + ", " + int_str(g.dw) + ", " + int_str(g.groups) + ", " +
              split_args + ", " + epilogue + ")));"};
}

const KernelRegistrar conv_kernels_registrar(Backend::kCuda, "Convolution", [] {
  OpKernel k{emit};
  k.dtypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};  // gemm.inc's, conv.inc's and conv3d.inc's
  k.scratch_bytes = [](const KernelSite& site) {
    const DType dtype = site.out[0].dtype;
    const ConvGeometry g = conv_geometry(site.attrs, site.in[0].shape);
    return partial_floats(g, path_of(g, dtype), cuda_gemm_precision(site.target.precision, dtype)) * kFloatBytes;
  };
  return k;
}());

}  // namespace
}  // namespace hybgen
