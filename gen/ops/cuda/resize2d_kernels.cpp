// CUDA kernel of Resize2D (templates/cuda/kernels/resize2d.inc): one thread
// per output value computes its source pixels with the float operations the
// C++ backend's tables were made with (gen/ops/resize2d.cpp).
#include <string>

#include "ops/cuda/storage_types.h"
#include "ops/op.h"
#include "ops/op_util.h"
#include "ops/resize2d.h"

namespace hybgen {
namespace {

KernelCall emit_resize2d(const EmitContext& ctx) {
  const Resize2DParams p = resize2d_params(ctx.node.attrs, ctx.in_types[0].shape);
  return {{"resize2d"},
          "HG_CHECK(hg_resize2d(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " + int_str(p.planes) +
              ", " + int_str(p.ih) + ", " + int_str(p.iw) + ", " + int_str(p.oh) + ", " + int_str(p.ow) + ", " +
              cpp_float(p.scale_h) + ", " + cpp_float(p.scale_w) + ", " + (p.linear ? "true" : "false") + ", " +
              int_str(p.transform) + ", " + int_str(p.rounding) + "));"};
}

const KernelRegistrar resize2d_kernels_registrar(Backend::kCuda, "Resize2D", in_half_storage(OpKernel{emit_resize2d}));

}  // namespace
}  // namespace hybgen
