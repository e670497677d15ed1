// CUDA kernel of Pooling (templates/cuda/kernels/pool.inc): max/avg/sum
// windows and global pooling, with the C++ backend's padding and divisor
// rules (gen/ops/pooling.cpp).
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {
namespace {

int64_t pair_at(const std::vector<int64_t>& v, std::size_t i, int64_t fallback) {
  return v.size() > i ? v[i] : fallback;
}

KernelCall emit_pooling(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  const Shape& in = ctx.in_types[0].shape;
  const Shape& out = ctx.out_types[0].shape;
  if (in.size() != 4 || out.size() != 4) throw Error("Pooling: data must be NCHW");
  const bool global = a.get_bool("global_pool");
  const std::string& type = a.get_string("pool_type");
  const int type_code = type == "max" ? 0 : type == "avg" ? 1 : 2;
  int64_t kh = in[2], kw = in[3], sh = 1, sw = 1, ph = 0, pw = 0;
  if (!global) {
    const auto& k = a.get_ints("kernel");
    if (k.size() != 2) throw Error("Pooling: only 2-D pooling is supported");
    kh = k[0], kw = k[1];
    sh = pair_at(a.get_ints("stride"), 0, 1), sw = pair_at(a.get_ints("stride"), 1, 1);
    ph = pair_at(a.get_ints("pad"), 0, 0), pw = pair_at(a.get_ints("pad"), 1, 0);
  }
  const std::vector<int64_t> sizes{in[0] * in[1], in[2], in[3], kh, kw, out[2], out[3], sh, sw, ph, pw};
  std::string args;
  for (int64_t v : sizes) args += ", " + std::to_string(v);
  return {{"pool"}, "HG_CHECK(hg_pool2d(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + args + ", " +
                        std::to_string(type_code) + ", " + (a.get_bool("count_include_pad") ? "true" : "false") +
                        ", " + (global ? "true" : "false") + "));"};
}

const CudaKernelRegistrar reg("Pooling", CudaOpKernel{emit_pooling, nullptr});

}  // namespace
}  // namespace hybgen
