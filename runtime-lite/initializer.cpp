#include "runtime-lite/initializer.h"

#include <cmath>

namespace hybgen::init {

Tensor Xavier::make(const Shape& shape, uint64_t seed) const {
  // Fans as MXNet computes them: axis 0 is the output, axis 1 the input,
  // further axes (kernel window) multiply both.
  const double receptive = shape.size() > 2 ? static_cast<double>(num_elements(Shape(shape.begin() + 2, shape.end()))) : 1.0;
  const double fan_out = shape.empty() ? 1.0 : static_cast<double>(shape[0]) * receptive;
  const double fan_in = shape.size() < 2 ? 1.0 : static_cast<double>(shape[1]) * receptive;
  const float scale = static_cast<float>(std::sqrt(magnitude_ / ((fan_in + fan_out) / 2.0)));
  return Tensor::random_uniform(shape, -scale, scale, seed);
}

}  // namespace hybgen::init
