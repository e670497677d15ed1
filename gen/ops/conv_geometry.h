// The geometry of a 2-D NCHW convolution from its attributes (kernel,
// stride, dilate, pad, num_filter, num_group) and its data shape, checked:
// what Convolution and the ops built from it (_pointwise_depthwise_conv)
// compute sizes and choose kernels with.
//
//   const ConvGeometry g = conv_geometry(attrs, {1, 3, 224, 224});
//   g.oh, g.ow;  // 112, 112 for a 3x3 stride-2 convolution padded by 1
#pragma once

#include <cstdint>

#include "ir/attrs.h"
#include "ir/tensor_type.h"

namespace hybgen {

struct ConvGeometry {
  int64_t n, c, h, w;  // input
  int64_t f, kh, kw;   // filters and kernel
  int64_t oh, ow;      // output
  int64_t sh, sw, ph, pw, dh, dw, groups;
};

// Error saying what is wrong: a kernel that is not 2-D, stride, dilate or pad
// without 2 values, data that is not 4-D, sizes that are not positive, groups
// that do not divide the channels and filters, a kernel larger than the
// padded input.
ConvGeometry conv_geometry(const Attrs& attrs, const Shape& data);

}  // namespace hybgen
