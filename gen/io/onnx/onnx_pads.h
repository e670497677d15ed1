// The padding of ONNX's windowed ops (Conv, ConvTranspose, MaxPool,
// AveragePool, LpPool): `pads` = [x1_begin, x2_begin, ..., x1_end, x2_end,
// ...] or `auto_pad` (SAME_UPPER, SAME_LOWER: the output is ceil(in /
// stride), the odd leftover at the end or at the beginning; VALID: none),
// as the begin and end padding of each spatial axis, which the registry's
// Convolution, Pooling and Deconvolution take as `pad` and `pad_end`.
//
//   check_window_pads(k);                                 // in an OnnxConverter check
//   const WindowPads p = window_pads(c, x_spatial, kernel, strides, dilations);
//   a.set("pad", p.begin); a.set("pad_end", p.end);
#pragma once

#include <cstdint>
#include <vector>

#include "io/onnx/onnx_ops.h"

namespace hybgen {

struct WindowPads {
  std::vector<int64_t> begin, end;
};

// Refuses up front: an auto_pad other than NOTSET, SAME_UPPER, SAME_LOWER and
// VALID, pads of odd length, negative pads.
void check_window_pads(OnnxCheck& k);

// The pads of a node whose input has spatial sizes `in`, with its kernel,
// strides and dilations (one value per spatial axis). fail()s on pads of
// another length than 2 * spatial axes or negative ones.
WindowPads window_pads(OnnxContext& c, const std::vector<int64_t>& in, const std::vector<int64_t>& kernel,
                       const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations);

// The registry Convolution's attributes for an ONNX Conv-like node (Conv,
// QLinearConv) with input shape `x` and weight shape `w`: kernel, filters,
// strides, dilations, pads (auto_pad too), groups.
Attrs onnx_conv_attrs(OnnxContext& c, const Shape& x, const Shape& w);

// MaxPool with dilations (Pooling has none): the input padded with the
// lowest float, one strided slice per kernel tap, their maximum. Reads the
// node's pads, auto_pad, ceil_mode and storage_order; output sizes as ONNX
// Runtime's (ceil_mode drops a last window starting in the end padding).
void onnx_dilated_max_pool(OnnxContext& c, const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                           const std::vector<int64_t>& dilations);

}  // namespace hybgen
