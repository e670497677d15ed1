// What the upsampling ops share (gen/ops/deconvolution.cpp, upsampling.cpp
// and cuda/upsample_kernels.cpp): the geometry of a transposed convolution
// (MXNet's Deconvolution, 1-D NCW or 2-D NCHW) from its attributes and data
// shape, checked; its reference and the printers of the kernels that read
// the weights as given (Deconvolution, bilinear UpSampling); bilinear
// UpSampling's Deconvolution attributes; _contrib_BilinearResize2D's source
// pixels and weights along an axis.
//
//   const DeconvGeometry g = deconv_geometry(attrs, {1, 64, 8, 8});
//   g.oh, g.ow;  // 16, 16 for kernel (2, 2), stride (2, 2)
//   deconv_reference(g, x, w, bias, y);
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/tensor_type.h"
#include "ops/op.h"

namespace hybgen {

// A 1-D deconvolution is the 2-D one with height 1 (h = kh = oh = 1,
// sh = dh = 1, ph = 0).
struct DeconvGeometry {
  int64_t n, c, h, w;  // input
  int64_t f, kh, kw;   // output channels and kernel
  int64_t oh, ow;      // output
  int64_t sh, sw, ph, pw, dh, dw, groups;
  bool one_d;
};

// Deconvolution's attributes: kernel (1 or 2 values), stride, dilate, pad,
// adj, target_shape (empty or as many values as the kernel), num_filter,
// num_group. target_shape, when any entry is non-zero, sets pad and adj as
// MXNet computes them (pad = ceil(p / 2), adj = p % 2 with p the size
// without padding less the target). Error saying what is wrong: data whose
// rank is not the kernel's + 2, sizes that are not positive, adj not below
// the stride, groups that do not divide channels and filters, an output of
// no pixels.
DeconvGeometry deconv_geometry(const Attrs& attrs, const Shape& data);

// Weight shape (c, f / groups, kh, kw), or (c, f / groups, kw) in 1-D.
Shape deconv_weight_shape(const DeconvGeometry& g);
// Output shape (n, f, oh, ow), or (n, f, ow) in 1-D.
Shape deconv_output_shape(const DeconvGeometry& g);

// y = x (*)^T w + bias (bias may be null), the plain C++ truth: per image
// and group, columns = W^T x, then each column added where it lands.
void deconv_reference(const DeconvGeometry& g, const float* x, const float* w, const float* bias, float* y);

// The geometry array the generated kernels take: {n, c, h, w, f, kh, kw, oh,
// ow, sh, sw, ph, pw, dh, dw, groups}.
std::vector<int64_t> deconv_geometry_list(const DeconvGeometry& g);

// The C++ call of the direct kernel (templates/kernels/deconv2d.inc), which
// reads the weights as given: each output sums the inputs that reach it.
KernelCall deconv_direct_cpp(const DeconvGeometry& g, const EmitContext& ctx);

// The CUDA call of the gather kernel (templates/cuda/kernels/deconv.inc).
KernelCall deconv_cuda(const DeconvGeometry& g, const EmitContext& ctx);

// Bilinear UpSampling's attributes (scale, num_filter) as the Deconvolution
// MXNet runs for it on `data` (NCHW): kernel 2*scale - scale%2, stride
// scale, pad ceil((scale-1)/2), one group per channel, no bias. Error when
// num_filter is not the channels.
Attrs upsampling_deconv_attrs(const Attrs& upsampling, const Shape& data);

// _contrib_BilinearResize2D along one axis of `in` pixels resized to `out`:
// per output pixel the two source pixels (first, second = first + 1 or, at
// the last pixel, first) and the weight of the second, computed in float as
// MXNet's CPU kernel does (align_corners: source = (in-1)/(out-1) * o; else
// (in/out) * (o + 0.5) - 0.5, clamped at 0).
struct ResizeAxis {
  std::vector<int64_t> first, second;
  std::vector<float> lambda;
};
ResizeAxis resize_axis(int64_t in, int64_t out, bool align_corners);

}  // namespace hybgen
