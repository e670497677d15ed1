// The largest absolute difference between two tensors of one shape: how the
// frontend's tests compare eager, hybridized and hand-computed outputs.
#pragma once

#include <gtest/gtest.h>

#include <cmath>

#include "runtime-lite/hybgen.h"

namespace hybgen {

inline float max_abs_diff(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  float d = 0;
  for (int64_t i = 0; i < a.size(); ++i) d = std::fmax(d, std::fabs(a.data()[i] - b.data()[i]));
  return d;
}

}  // namespace hybgen
