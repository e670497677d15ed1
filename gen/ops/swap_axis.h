// SwapAxis's permutation, for the op (gen/ops/swap_axis.cpp) and its CUDA
// kernel (gen/ops/cuda/rnn_kernels.cpp), which both run it as a transpose.
//
//   Attrs t = swap_axis_as_transpose(node.attrs, 3);  // dim1=0, dim2=1: axes (1, 0, 2)
#pragma once

#include <cstddef>

#include "ir/attrs.h"

namespace hybgen {

// transpose's attributes for SwapAxis's dim1/dim2 on `rank` axes (negative
// axes count from the end); Error when an axis is out of range.
Attrs swap_axis_as_transpose(const Attrs& attrs, std::size_t rank);

}  // namespace hybgen
