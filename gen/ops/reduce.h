// What the reduction ops (gen/ops/reduce.cpp) share with their CUDA
// printer: which axes a node reduces and how it combines values.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/attrs.h"

namespace hybgen {

enum class ReduceKind { kSum, kMean, kMax, kMin, kProd, kNorm1, kNorm2 };

// The reduction op `op` ("sum", "max", "norm" ...) computes with these
// (normalized) attributes; Error for norm's unsupported ord.
ReduceKind reduce_kind(const std::string& op, const Attrs& attrs);

// Per input axis: reduced. `axis` empty reduces all; `exclude` (when the op
// has it) inverts the set; Error for an axis out of range or repeated.
std::vector<bool> reduced_axes(const Attrs& attrs, std::size_t rank);

// How the kernels of both backends (templates/kernels/reduce.inc,
// templates/cuda/kernels/reduce.inc) name the way values combine: 0 sum,
// 1 max, 2 min, 3 prod, 4 |x| sum, 5 x^2 sum.
int reduce_kernel_code(ReduceKind kind);

}  // namespace hybgen
