// transpose's permutation, for passes that look through transposes
// (fuse_strided_batch_dot) as well as the op itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ir/attrs.h"

namespace hybgen {

// Output axis i is input axis result[i]: the `axes` attribute normalised,
// or the axes reversed when it is empty. Error when it is no permutation of
// `rank` axes.
std::vector<int64_t> transpose_axes(const Attrs& attrs, std::size_t rank);

}  // namespace hybgen
