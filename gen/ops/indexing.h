// What the selection, indexing and shape ops (gen/ops/select.cpp,
// indexing.cpp, pad.cpp) share with their CUDA printers
// (gen/ops/cuda/data_kernels.cpp, select_kernels.cpp): axis geometry, MXNet's
// float indices, and the strided views of the injective ops.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/attrs.h"
#include "ir/tensor_type.h"
#include "ops/slice.h"

namespace hybgen {

// A tensor seen as [outer, n, inner] around one axis.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
};
// Around axis `axis` of `shape` (negative from the end; Error when out of range).
AxisSplit split_at_axis(const Shape& shape, int64_t axis);
// The same, where axis None (kSliceNone) is the flattened input as one axis
// (argmax, argmin and topk with MXNet's axis=None).
AxisSplit split_at_axis_or_all(const Shape& shape, int64_t axis);

// MXNet's integer from a float index: truncated toward zero; NaN is 0,
// values past +-9e18 saturate (templates/kernels/index.inc's hg_index_trunc).
int64_t truncate_index(float v);
// An index into n positions, clipped into [0, n) or wrapped (hg_index).
int64_t bound_index(float v, int64_t n, bool wrap);

// An injective op as a strided gather: the view of input 0 (its dims may
// split output axes, their product is the output's size) and the output shape.
struct GatherView {
  StridedView view;
  Shape out;
};
// The views of tile, repeat, reverse, slice_like, space_to_depth,
// depth_to_space for these (normalized) attributes and input shapes; Error
// naming what does not fit.
GatherView gather_view(const std::string& op, const Attrs& attrs, const std::vector<Shape>& in);

// a * b for output sizes; Error naming `what` when it leaves 2^62 (a hostile
// attribute: tile's reps, one_hot's depth).
int64_t checked_size(int64_t a, int64_t b, const std::string& what);
// Error unless the shape's element count and bytes fit in 64 bits.
void check_output_size(const Shape& out, const std::string& what);

// Drops size-1 axes and merges neighbouring axes that walk memory as one, so
// equal gathers print alike. Never empty: a lone element is dims {1}, strides {1}.
void simplify_view(StridedView& v);

}  // namespace hybgen
