// Views of a tensor as a strided gather: what slice, slice_axis and
// SliceChannel read, shared by their C++ and CUDA printers.
//
//   StridedView v = slice_view({4, 6}, {1, 0}, {3, 6}, {});  // offset 6, dims (2, 6), strides (6, 1)
#pragma once

#include <cstdint>
#include <vector>

#include "ir/tensor_type.h"

namespace hybgen {

// Where the view starts in the input, the output's dims, and the input
// stride of each output axis.
struct StridedView {
  int64_t offset = 0;
  Shape dims;
  std::vector<int64_t> strides;
};

// The strides of a row-major shape, in elements.
std::vector<int64_t> row_major_strides(const Shape& s);

// MXNet's slice: begin/end/step per leading axis, kSliceNone for MXNet's
// None, negative indices from the end; Error for a step of 0, lists that do
// not fit the input, or an axis that slices to nothing.
StridedView slice_view(const Shape& in, const std::vector<int64_t>& begin, const std::vector<int64_t>& end,
                       const std::vector<int64_t>& step);

}  // namespace hybgen
