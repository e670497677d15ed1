// CUDA kernels of Pooling: 1-D and 2-D windows and global pooling through
// templates/cuda/kernels/pool.inc (1-D as height 1), 3-D windows through
// pool3d.inc, with the C++ backend's padding and divisor rules
// (gen/ops/pooling.cpp). As there, 3-D windows of depth 1 (stride 1, no
// depth padding) run as 2-D pooling over every depth slice, and global 3-D
// pooling as global 2-D pooling of a (d*h, w) plane.
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/conv_geometry.h"
#include "ops/cuda/storage_types.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

KernelCall emit_pooling(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const PoolGeometry g = pool_geometry(a, ctx.in_types[0].shape);
  const bool global = a.get_bool("global_pool");
  const std::string include_pad = g.count_include_pad ? "true" : "false";
  const int64_t planes = g.n * g.c;
  if (g.spatial == 3 && !global && !(g.kd == 1 && g.sd == 1 && g.pd == 0 && g.pd_end == 0)) {
    const std::vector<int64_t> geo{planes, g.d,  g.h,  g.w,  g.kd, g.kh,     g.kw,     g.od,     g.oh,    g.ow,
                                   g.sd,   g.sh, g.sw, g.pd, g.ph, g.pw, g.pd_end, g.ph_end, g.pw_end};
    std::string list;
    for (int64_t v : geo) list += (list.empty() ? "" : ", ") + std::to_string(v) + "L";
    return {{"pool3d"}, "HG_CHECK(hg_pool3d(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] +
                            ", HgPool3dGeometry{{" + list + "}}, " + std::to_string(g.type) + ", " + include_pad +
                            "));"};
  }
  // A 2-D pooling: depth slices as planes, or a global 3-D one as a (d*h, w) plane.
  const bool slices = g.spatial == 3 && !global;
  const int64_t p2 = slices ? planes * g.d : planes, h2 = global ? g.d * g.h : g.h, kh2 = global ? g.d * g.kh : g.kh;
  const std::vector<int64_t> sizes{p2, h2, g.w, kh2, g.kw, g.oh, g.ow, g.sh, g.sw, g.ph, g.pw, g.ph_end, g.pw_end};
  std::string args;
  for (int64_t v : sizes) args += ", " + std::to_string(v);
  return {{"pool"}, "HG_CHECK(hg_pool2d(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + args + ", " +
                        std::to_string(g.type) + ", " + include_pad + ", " + (global ? "true" : "false") + "));"};
}

const KernelRegistrar pool_kernels_registrar(Backend::kCuda, "Pooling", in_half_storage(OpKernel{emit_pooling}));

}  // namespace
}  // namespace hybgen
