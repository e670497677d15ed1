// Small helpers shared by the op definitions in gen/ops/: axis and shape
// arithmetic, and printing C++ literals for generated code.
#pragma once

#include <cstdint>
#include <climits>
#include <string>
#include <vector>

#include "ir/tensor_type.h"

namespace hybgen {

// MXNet's None inside an int tuple (slice's begin=(0, None)); JSON null.
constexpr int64_t kSliceNone = INT64_MIN;

// Normalises a possibly negative axis against `rank`; Error when out of range.
int normalize_axis(int64_t axis, std::size_t rank);

// Numpy broadcasting of two shapes; Error when they are incompatible.
Shape broadcast_shapes(const Shape& a, const Shape& b);

// Element strides of `shape` seen through a broadcast to `out` (0 on
// broadcast dims), right-aligned to out's rank.
std::vector<int64_t> broadcast_strides(const Shape& shape, const Shape& out);

// Product of shape[begin, end).
int64_t dims_product(const Shape& shape, std::size_t begin, std::size_t end);

// A float literal that reads back as the same float: "0.5f", "-1e-05f".
std::string cpp_float(double value);
// "{1, 2, 3}"
std::string cpp_int_list(const std::vector<int64_t>& values);

}  // namespace hybgen
