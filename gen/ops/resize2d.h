// What the CUDA printer of Resize2D (gen/ops/cuda/resize2d_kernels.cpp)
// takes from the op (gen/ops/resize2d.cpp): sizes, the scales the
// coordinate transform divides by (in float, as the C++ tables use them)
// and the modes as the kernels' codes.
//
//   const Resize2DParams p = resize2d_params(node.attrs, data_shape);
//   p.scale_h;  // 2.0f for 4 rows resized to 8 without a scale_height
#pragma once

#include <cstdint>

#include "ir/attrs.h"
#include "ir/tensor_type.h"

namespace hybgen {

struct Resize2DParams {
  int64_t planes, ih, iw, oh, ow;
  float scale_h, scale_w;
  bool linear;
  // 0 half_pixel, 1 pytorch_half_pixel, 2 align_corners, 3 asymmetric, 4 tf_half_pixel_for_nearest.
  int transform;
  // 0 round_prefer_floor, 1 round_prefer_ceil, 2 floor, 3 ceil.
  int rounding;
};

// Attributes normalized, data NCHW (checked by the op's shape rule).
Resize2DParams resize2d_params(const Attrs& a, const Shape& data);

}  // namespace hybgen
