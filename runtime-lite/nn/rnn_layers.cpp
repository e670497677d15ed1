#include "runtime-lite/nn/rnn_layers.h"

#include "runtime-lite/initializer.h"
#include "runtime-lite/parameter.h"

namespace hybgen::rnn {

RecurrentLayer::RecurrentLayer(const std::string& prefix_hint, const std::string& mode, int64_t hidden_size,
                               int64_t num_layers, const std::string& layout, double dropout, bool bidirectional,
                               int64_t input_size)
    : HybridBlock(prefix_hint),
      mode_(mode),
      layout_(layout),
      hidden_(hidden_size),
      layers_(num_layers),
      dirs_(bidirectional ? 2 : 1),
      dropout_(dropout) {
  if (mode != "lstm" && mode != "gru" && mode != "rnn_tanh" && mode != "rnn_relu")
    throw Error(prefix() + ": mode must be lstm, gru, rnn_tanh or rnn_relu, got " + mode);
  if (layout != "TNC" && layout != "NTC") throw Error(prefix() + ": layout must be TNC or NTC, got " + layout);
  if (hidden_size <= 0) throw Error(prefix() + ": hidden_size must be positive, got " + std::to_string(hidden_size));
  if (num_layers <= 0) throw Error(prefix() + ": num_layers must be positive, got " + std::to_string(num_layers));
  const int64_t gh = (mode == "lstm" ? 4 : mode == "gru" ? 3 : 1) * hidden_size;
  int64_t in = input_size;
  for (int64_t l = 0; l < num_layers; ++l) {
    for (int64_t d = 0; d < dirs_; ++d) {
      const std::string base = std::string(d == 0 ? "l" : "r") + std::to_string(l) + "_";
      weights_.push_back(&add_param(base + "i2h_weight", {gh, in}));
      weights_.push_back(&add_param(base + "h2h_weight", {gh, hidden_size}));
      for (const char* b : {"i2h_bias", "h2h_bias"}) {
        biases_.push_back(&add_param(base + b, {gh}));
        biases_.back()->set_default_initializer(init::Zero());
      }
    }
    in = hidden_size * dirs_;
  }
}

std::vector<Tensor> RecurrentLayer::begin_state(int64_t batch) const {
  std::vector<Tensor> states{Tensor(Shape{layers_ * dirs_, batch, hidden_})};
  if (mode_ == "lstm") states.emplace_back(Shape{layers_ * dirs_, batch, hidden_});
  return states;
}

Tensor RecurrentLayer::hybrid_forward(const Ops& F, const Tensor& x) {
  return hybrid_forward(F, std::vector<Tensor>{x})[0];
}

std::vector<Tensor> RecurrentLayer::hybrid_forward(const Ops& F, const std::vector<Tensor>& inputs) {
  const std::size_t num_states = mode_ == "lstm" ? 2 : 1;
  if (inputs.size() != 1 && inputs.size() != 1 + num_states)
    throw Error(prefix() + ": takes the input, or the input and " + std::to_string(num_states) + " state(s); given " +
                std::to_string(inputs.size()) + " tensors");
  Tensor x = inputs[0];
  if (!x.has_shape() || x.shape().size() != 3)
    throw Error(prefix() + ": the input must have 3 axes (" + layout_ + ")");
  if (layout_ == "NTC") x = F.transpose(x, {1, 0, 2}, "swapaxes0");
  // Deferred input size: the first input tells it.
  if (!weights_[0]->shape_known()) {
    const int64_t gh = weights_[0]->shape()[0];
    weights_[0]->set_shape({gh, x.shape()[2]});
    if (dirs_ == 2) weights_[2]->set_shape({gh, x.shape()[2]});
  }
  std::vector<Tensor> flat;
  for (Parameter* p : weights_) flat.push_back(F.reshape(F.param(*p), {-1}));
  for (Parameter* p : biases_) flat.push_back(F.reshape(F.param(*p), {-1}));
  const Tensor params = F.Concat(flat, 0, "rnn_param_concat0");
  std::vector<Tensor> states(inputs.begin() + 1, inputs.end());
  const bool skip_states = states.empty();
  if (skip_states) states = begin_state(x.shape()[1]);
  const std::vector<Tensor> outs = F.RNN(x, params, states[0], num_states == 2 ? states[1] : Tensor(), hidden_, layers_,
                                         mode_, dirs_ == 2, true, dropout_, "rnn0");
  Tensor out = outs[0];
  if (layout_ == "NTC") out = F.transpose(out, {1, 0, 2}, "swapaxes1");
  if (skip_states) return {out};
  std::vector<Tensor> result{out};
  result.insert(result.end(), outs.begin() + 1, outs.end());
  return result;
}

}  // namespace hybgen::rnn
