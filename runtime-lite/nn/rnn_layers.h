// Gluon's recurrent layers (gluon.rnn.LSTM, GRU, RNN): stacked layers of one
// or two directions run by MXNet's fused RNN op, with Gluon's parameter
// names (l0_i2h_weight, l0_h2h_weight, l0_i2h_bias, l0_h2h_bias, r0_... for
// the reverse direction, l1_... for the next layer) and layouts TNC or NTC.
//
//   auto lstm = std::make_shared<rnn::LSTM>(128);            // input size from the first call
//   Tensor out = (*lstm)(x);                                 // x (T, N, C) -> (T, N, 128), zero states
//   auto outs = (*lstm)(std::vector<Tensor>{x, h0, c0});    // -> {out, hy, cy}
#pragma once

#include <string>
#include <vector>

#include "runtime-lite/block.h"

namespace hybgen::rnn {

// The common layer; LSTM, GRU and RNN below pick the mode.
class RecurrentLayer : public HybridBlock {
 public:
  // mode: lstm, gru, rnn_tanh, rnn_relu; layout "TNC" or "NTC"; input_size 0:
  // taken from the first input.
  RecurrentLayer(const std::string& prefix_hint, const std::string& mode, int64_t hidden_size, int64_t num_layers,
                 const std::string& layout, double dropout, bool bidirectional, int64_t input_size);
  // {x} -> {out}; {x, h0} (and c0 for LSTM) -> {out, hy} (and cy), states (L*D, N, H).
  std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& inputs) override;
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override;

  int64_t hidden_size() const { return hidden_; }
  // Gluon's begin_state: zero states of shape (L*D, batch, H), one per state.
  std::vector<Tensor> begin_state(int64_t batch) const;

 private:
  std::string mode_, layout_;
  int64_t hidden_, layers_, dirs_;
  double dropout_;
  // Per layer and direction: i2h_weight, h2h_weight; then the biases likewise
  // (MXNet's order of the flat parameter vector).
  std::vector<Parameter*> weights_, biases_;
};

class LSTM : public RecurrentLayer {
 public:
  explicit LSTM(int64_t hidden_size, int64_t num_layers = 1, const std::string& layout = "TNC", double dropout = 0.0,
                bool bidirectional = false, int64_t input_size = 0)
      : RecurrentLayer("lstm", "lstm", hidden_size, num_layers, layout, dropout, bidirectional, input_size) {}
};

class GRU : public RecurrentLayer {
 public:
  explicit GRU(int64_t hidden_size, int64_t num_layers = 1, const std::string& layout = "TNC", double dropout = 0.0,
               bool bidirectional = false, int64_t input_size = 0)
      : RecurrentLayer("gru", "gru", hidden_size, num_layers, layout, dropout, bidirectional, input_size) {}
};

// activation "tanh" or "relu".
class RNN : public RecurrentLayer {
 public:
  explicit RNN(int64_t hidden_size, int64_t num_layers = 1, const std::string& activation = "tanh",
               const std::string& layout = "TNC", double dropout = 0.0, bool bidirectional = false,
               int64_t input_size = 0)
      : RecurrentLayer("rnn", "rnn_" + activation, hidden_size, num_layers, layout, dropout, bidirectional,
                       input_size) {}
};

}  // namespace hybgen::rnn
