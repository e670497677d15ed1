// The geometry of a convolution from its attributes (kernel, stride, dilate,
// pad, num_filter, num_group, layout) and its data shape, checked: what
// Convolution and the ops built from it (_pointwise_depthwise_conv) compute
// sizes and choose kernels with. 1-D convolutions (NCW) come out as 2-D ones
// of height 1, so every 2-D kernel serves them; 3-D ones (NCDHW) carry the
// depth axis in the d fields (1 or 0 elsewhere) and `spatial` says which.
//
//   const ConvGeometry g = conv_geometry(attrs, {1, 3, 224, 224});
//   g.oh, g.ow;  // 112, 112 for a 3x3 stride-2 convolution padded by 1
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/tensor_type.h"

namespace hybgen {

struct ConvGeometry {
  int64_t n, c, h, w;  // input
  int64_t f, kh, kw;   // filters and kernel
  int64_t oh, ow;      // output
  int64_t sh, sw, ph, pw, dh, dw, groups;  // ph, pw: padding before the first row and column
  // The depth axis of a 3-D convolution: input, kernel, output, stride, pad, dilation.
  int64_t d = 1, kd = 1, od = 1, sd = 1, pd = 0, dd = 1;
  // Padding after the last depth slice, row and column (attribute pad_end;
  // equal to the begin padding unless given, as ONNX's asymmetric pads).
  // Kernels take the begin padding as the window origin and the output size
  // above, and read only inside the input, so the end padding only sizes the output.
  int64_t pd_end = 0, ph_end = 0, pw_end = 0;
  int spatial = 2;  // spatial axes of the data: 1 (NCW), 2 (NCHW) or 3 (NCDHW)
};

// Error saying what is wrong: a kernel that is not 1-, 2- or 3-D, stride,
// dilate, pad or pad_end without as many values as the kernel, a layout other than
// the kernel's, data of another rank, sizes that are not positive, groups
// that do not divide the channels and filters, a kernel larger than the
// padded input.
ConvGeometry conv_geometry(const Attrs& attrs, const Shape& data);

// The layout of data with `spatial` axes (NCW, NCHW, NCDHW); `attr` is the
// node's layout attribute ("None": take the kernel's). Error when they differ.
void check_layout(const std::string& attr, int spatial);

// The output shape of a geometry: (n, f, ow), (n, f, oh, ow) or (n, f, od, oh, ow).
Shape conv_output_shape(const ConvGeometry& g);

// The weight shape: (f, c/groups, kw), ..., (f, c/groups, kd, kh, kw).
Shape conv_weight_shape(const ConvGeometry& g);

// The geometry of Pooling from its attributes (kernel, stride, pad, pad_end,
// pool_type, global_pool, pooling_convention, count_include_pad, layout) and
// its data shape, checked, as ConvGeometry: 1-D pooling comes out as 2-D of
// height 1, 3-D carries the depth axis in the d fields.
struct PoolGeometry {
  int64_t n, c, h, w, kh, kw, oh, ow, sh, sw, ph, pw;
  int64_t d = 1, kd = 1, od = 1, sd = 1, pd = 0;
  // Padding after the end of each axis (pad_end; default: the begin padding):
  // windows are clipped to [-pad, size + pad_end) for count_include_pad.
  int64_t pd_end = 0, ph_end = 0, pw_end = 0;
  int type = 0;  // 0 max, 1 avg, 2 sum
  bool count_include_pad = true;
  int spatial = 2;
};

PoolGeometry pool_geometry(const Attrs& attrs, const Shape& data);

// (n, c, ow), (n, c, oh, ow) or (n, c, od, oh, ow).
Shape pool_output_shape(const PoolGeometry& g);

}  // namespace hybgen
