// CUDA kernel of _pointwise_depthwise_conv (templates/cuda/kernels/
// depthwise_pointwise.inc): the 1x1 convolution of a tile's input region
// into shared memory, then the depthwise convolution from there, in one
// launch. Filters whose 1x1 tile alone overflows the shared buffer (huge
// dilated ones) take two launches through scratch instead. The plain
// depthwise convolution (hg_depthwise_conv2d in depthwise.inc) is launched
// by the Convolution emitter.
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

// kHgPwdwMidFloats in depthwise_pointwise.inc.
constexpr int64_t kMidFloats = 4096;

int64_t pair_at(const std::vector<int64_t>& v, std::size_t i, int64_t fallback) {
  return v.size() > i ? v[i] : fallback;
}

struct Geometry {
  int64_t n, cin, h, w, mid, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
};

Geometry geometry(const Attrs& a, const std::vector<TensorType>& in, const std::vector<TensorType>& out) {
  const Shape& x = in[0].shape;
  const Shape& y = out[0].shape;
  if (x.size() != 4 || y.size() != 4) throw Error("_pointwise_depthwise_conv: data must be NCHW");
  const auto& k = a.get_ints("kernel");
  if (k.size() != 2) throw Error("_pointwise_depthwise_conv: the kernel must be 2-D");
  Geometry g{};
  g.n = x[0], g.cin = x[1], g.h = x[2], g.w = x[3];
  g.mid = a.get_int("num_filter");
  g.oh = y[2], g.ow = y[3];
  g.kh = k[0], g.kw = k[1];
  g.sh = pair_at(a.get_ints("stride"), 0, 1), g.sw = pair_at(a.get_ints("stride"), 1, 1);
  g.ph = pair_at(a.get_ints("pad"), 0, 0), g.pw = pair_at(a.get_ints("pad"), 1, 0);
  g.dh = pair_at(a.get_ints("dilate"), 0, 1), g.dw = pair_at(a.get_ints("dilate"), 1, 1);
  return g;
}

// As hg_pwdw_fits: a 1x1 output tile's input region, 4 channels of it, fits the buffer.
bool fused_fits(const Geometry& g) {
  return ((g.kh - 1) * g.dh + 1) * ((g.kw - 1) * g.dw + 1) * 4 <= kMidFloats;
}

std::string activation_object(const Attrs& a) {
  const std::string& act = a.get_string("act_type");
  if (act == "relu") return "HgPwdwActRelu()";
  if (act == "clip") return "HgPwdwActClip{" + cpp_float(a.get_float("a_min")) + ", " + cpp_float(a.get_float("a_max")) + "}";
  return "HgPwdwActNone()";
}

KernelCall emit_pointwise_depthwise(const EmitContext& ctx) {
  if (ctx.in_packed.size() > 1 && ctx.in_packed[1]) throw Error("_pointwise_depthwise_conv: CUDA takes weight1 unpacked");
  if (ctx.in_packed.size() > 3 && ctx.in_packed[3]) throw Error("_pointwise_depthwise_conv: CUDA takes weight2 unpacked");
  const Geometry g = geometry(ctx.node.attrs, ctx.in_types, ctx.out_types);
  const bool fused = fused_fits(g);
  std::string args = ctx.stream;
  for (int i = 0; i < 5; ++i) args += ", " + ctx.in[i];
  args += ", " + ctx.out[0];
  if (!fused) args += ", " + ctx.scratch;
  for (int64_t v : {g.n, g.cin, g.h, g.w, g.mid, g.oh, g.ow, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, g.dh, g.dw})
    args += ", " + std::to_string(v) + "L";
  args += ", " + activation_object(ctx.node.attrs) + ", " + epilogue_argument(ctx);
  return {{"depthwise_pointwise"},
          std::string("HG_CHECK(") + (fused ? "hg_pointwise_depthwise(" : "hg_pointwise_then_depthwise(") + args + "));"};
}

int64_t scratch_bytes(const KernelSite& site) {
  const Geometry g = geometry(site.attrs, site.in, site.out);
  return fused_fits(g) ? 0 : g.n * g.mid * g.h * g.w * static_cast<int64_t>(dtype_size(site.out[0].dtype));
}

const KernelRegistrar depthwise_kernels_registrar(Backend::kCuda, "_pointwise_depthwise_conv", [] {
  OpKernel k = in_half_storage(OpKernel{emit_pointwise_depthwise});
  k.scratch_bytes = scratch_bytes;
  return k;
}());

}  // namespace
}  // namespace hybgen
