// CUDA kernels of Deconvolution, UpSampling and _contrib_BilinearResize2D
// (templates/cuda/kernels/deconv.inc, upsample.inc): Deconvolution and
// bilinear UpSampling gather each output from the inputs that reach it,
// nearest UpSampling and bilinear resizing compute one output per thread.
#include <string>
#include <vector>

#include "ir/error.h"
#include "ops/cuda/storage_types.h"
#include "ops/deconv.h"
#include "ops/op.h"
#include "ops/op_util.h"

namespace hybgen {

KernelCall deconv_cuda(const DeconvGeometry& g, const EmitContext& ctx) {
  if (ctx.in_packed.size() > 1 && ctx.in_packed[1])
    throw Error("the CUDA deconvolution reads weights as given: it got packed ones");
  const std::string bias = ctx.in.size() > 2 ? ctx.in[2] : "nullptr";
  std::string args;
  for (int64_t v : deconv_geometry_list(g)) args += ", " + std::to_string(v);
  return {{"deconv"}, "HG_CHECK(hg_deconv2d(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.in[1] + ", " + bias + ", " +
                          ctx.out[0] + args + ", " + epilogue_argument(ctx) + "));"};
}

namespace {

KernelCall emit_deconvolution(const EmitContext& ctx) {
  return deconv_cuda(deconv_geometry(ctx.node.attrs, ctx.in_types[0].shape), ctx);
}

KernelCall emit_upsampling(const EmitContext& ctx) {
  const Attrs& a = ctx.node.attrs;
  if (a.get_string("sample_type") == "bilinear")
    return deconv_cuda(deconv_geometry(upsampling_deconv_attrs(a, ctx.in_types[0].shape), ctx.in_types[0].shape), ctx);
  const Shape& out = ctx.out_types[0].shape;
  const bool sum = a.get_string("multi_input_mode") == "sum";
  std::string code;
  int64_t channel0 = 0;
  for (std::size_t i = 0; i < ctx.in.size(); ++i) {
    const Shape& s = ctx.in_types[i].shape;
    if (!code.empty()) code += "\n";
    code += "HG_CHECK(hg_upsample_nearest(" + ctx.stream + ", " + ctx.in[i] + ", " + ctx.out[0] + " + " +
            int_str(channel0 * out[2] * out[3]) + ", " + int_str(s[0]) + ", " + int_str(s[1]) + ", " + int_str(s[2]) +
            ", " + int_str(s[3]) + ", " + int_str(out[2] / s[2]) + ", " + int_str(out[1] * out[2] * out[3]) + ", " +
            (sum && i > 0 ? "true" : "false") + "));";
    if (!sum) channel0 += s[1];
  }
  return {{"upsample"}, code};
}

// MXNet's area_pixel_compute_scale, in float.
float resize_scale(int64_t in, int64_t out, bool align_corners) {
  if (out <= 1) return 0.0f;
  return align_corners ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                       : static_cast<float>(in) / static_cast<float>(out);
}

KernelCall emit_resize(const EmitContext& ctx) {
  const Shape& s = ctx.in_types[0].shape;
  const Shape& o = ctx.out_types[0].shape;
  const int64_t planes = s[0] * s[1];
  // Mode like reads only the second input's shape.
  const std::string like = ctx.in.size() > 1 ? "(void)(" + ctx.in[1] + ");  // only its shape is used\n" : "";
  if (s[2] == o[2] && s[3] == o[3])
    return {{"copy"},
            like + "HG_CHECK(hg_copy(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
                int_str(planes * s[2] * s[3]) + "));"};
  const bool align = ctx.node.attrs.get_bool("align_corners");
  return {{"upsample"},
          like + "HG_CHECK(hg_bilinear_resize(" + ctx.stream + ", " + ctx.in[0] + ", " + ctx.out[0] + ", " +
              int_str(planes) + ", " + int_str(s[2]) + ", " + int_str(s[3]) + ", " + int_str(o[2]) + ", " +
              int_str(o[3]) + ", " + cpp_float(resize_scale(s[2], o[2], align)) + ", " +
              cpp_float(resize_scale(s[3], o[3], align)) + ", " + (align ? "true" : "false") + "));"};
}

const KernelRegistrar reg_deconvolution(Backend::kCuda, "Deconvolution", in_half_storage(OpKernel{emit_deconvolution}));
// UpSampling: nearest in hg_upsample_nearest, bilinear as Deconvolution, both templates on the storage type.
const KernelRegistrar reg_upsampling(Backend::kCuda, "UpSampling", in_half_storage(OpKernel{emit_upsampling}));
const KernelRegistrar reg_resize(Backend::kCuda, "_contrib_BilinearResize2D", in_half_storage(OpKernel{emit_resize}));

}  // namespace
}  // namespace hybgen
