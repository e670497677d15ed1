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

}  // namespace hybgen
