// Kernels the optimized interpreter runs in place of an op's reference where
// work can be done once at construction or skipped, or where the generated
// code's own arithmetic is faster:
//  - Convolution (2-D or 1-D, weights known): 3x3 stride-1 filters on maps
//    of 14x14 and up by Winograd F(2x2, 3x3) with the filters transformed
//    here; 1x1 stride-1 ones straight to sgemm; the others im2col (row
//    copies into preallocated scratch, not a bounds check per element) +
//    sgemm, per group when grouped; depthwise ones summed row by row over
//    the span each tap reads inside the input (no bounds check per element);
//  - _pointwise_depthwise_conv: its 1x1 convolution by sgemm a block of
//    channels at a time into scratch, then those channels' depthwise planes;
//  - softmax on the last axis and GELU with the generated code's exp and
//    GELU polynomials (templates/kernels/math.inc: a few ulp), in float.
// Results agree with the reference to rounding (the tests hold them to 1e-5).
//
//   std::optional<FastKernel> k = fast_kernel(node, in_types, out_types, constant_inputs);
//   k->run(inputs, outputs, scratch);   // scratch: k->scratch_floats floats
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "ir/graph.h"

namespace hybgen {

struct FastKernel {
  std::size_t scratch_floats = 0;
  // in: the node's inputs (constants included); out: its outputs.
  std::function<void(const std::vector<const float*>& in, const std::vector<float*>& out, float* scratch)> run;
};

// The fast kernel for this node, or nullopt where the reference serves (every
// node with a value other than float32: these are float kernels).
// `constants[i]`: input i's data when it is a weight, else null (a weight
// known now can be re-laid out now).
std::optional<FastKernel> fast_kernel(const Node& node, const std::vector<TensorType>& in_types,
                                      const std::vector<TensorType>& out_types,
                                      const std::vector<const float*>& constants);

}  // namespace hybgen
