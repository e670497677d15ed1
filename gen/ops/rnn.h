// The sizes of MXNet's fused RNN op (gen/ops/rnn.cpp) and where each weight
// lies in its flat `parameters` vector, for the op and its CUDA kernel
// (gen/ops/cuda/rnn_kernels.cpp).
//
//   const RnnDims d = rnn_dims(node.attrs, data_shape);   // checks the attributes
//   int64_t w = d.i2h_weight(layer, dir), b = d.h2h_bias(layer, dir);
//   // w .. w + d.gates() * d.hidden * d.layer_input(layer): W_i2h [G*H x input]
#pragma once

#include <cstdint>
#include <string>

#include "ir/attrs.h"
#include "ir/tensor_type.h"

namespace hybgen {

// MXNet's layout of `parameters`: every layer's and direction's weights
// first (per layer, per direction: W_i2h [G*H x input] then W_h2h [G*H x H]),
// then every bias (per layer, per direction: b_i2h [G*H] then b_h2h [G*H]).
// Gates in MXNet's order: LSTM i, f, g, o; GRU r, z, n.
struct RnnDims {
  std::string mode;  // "rnn_relu", "rnn_tanh", "lstm", "gru"
  int64_t layers = 1, dirs = 1, steps = 1, batch = 1, input = 1, hidden = 1;

  int64_t gates() const { return mode == "lstm" ? 4 : mode == "gru" ? 3 : 1; }
  // 0 rnn_relu, 1 rnn_tanh, 2 lstm, 3 gru: the kernels' template argument.
  int mode_index() const { return mode == "rnn_relu" ? 0 : mode == "rnn_tanh" ? 1 : mode == "lstm" ? 2 : 3; }
  int64_t layer_input(int64_t layer) const { return layer == 0 ? input : dirs * hidden; }
  // Floats of one layer's and direction's weights (W_i2h and W_h2h).
  int64_t weights_of(int64_t layer) const { return gates() * hidden * (layer_input(layer) + hidden); }
  int64_t i2h_weight(int64_t layer, int64_t dir) const;
  int64_t h2h_weight(int64_t layer, int64_t dir) const {
    return i2h_weight(layer, dir) + gates() * hidden * layer_input(layer);
  }
  int64_t weight_floats() const;  // all weights: where the biases start
  int64_t i2h_bias(int64_t layer, int64_t dir) const {
    return weight_floats() + (layer * dirs + dir) * 2 * gates() * hidden;
  }
  int64_t h2h_bias(int64_t layer, int64_t dir) const { return i2h_bias(layer, dir) + gates() * hidden; }
  int64_t param_floats() const { return weight_floats() + layers * dirs * 2 * gates() * hidden; }
};

// The sizes for data (T, N, C) under these (normalized) attributes; throws
// Error naming what is wrong or not supported (projection, state clipping,
// sequence lengths), and when the sizes are absurd.
RnnDims rnn_dims(const Attrs& attrs, const Shape& data);

}  // namespace hybgen
