// Gluon's recurrent layers (runtime-lite/nn/rnn_layers.h) and F.RNN: an LSTM
// step and a GRU step by hand, Gluon's parameter names and the flat layout,
// states in and out, layouts, and the same outputs hybridized as eager.
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"

namespace hybgen {
namespace {

float sig(float x) { return 1.0f / (1.0f + std::exp(-x)); }

TEST(RnnOp, LstmAndGruStepsByHand) {
  const Ops F;
  // One unit, one input: LSTM parameters W_i2h (4), W_h2h (4), b_i2h (4), b_h2h (4), gates i, f, g, o.
  const std::vector<float> w{0.5f, -0.25f, 1.0f, 0.75f, 0.1f, 0.2f, -0.3f, 0.4f,
                             0.05f, 0.1f, -0.1f, 0.2f, 0.0f, 0.1f, 0.05f, -0.05f};
  const float x0 = 0.8f, x1 = -1.5f, h0 = 0.3f, c0 = -0.2f;
  const auto outs = F.RNN(Tensor::from_vector({2, 1, 1}, {x0, x1}), Tensor::from_vector({16}, w),
                          Tensor::from_vector({1, 1, 1}, {h0}), Tensor::from_vector({1, 1, 1}, {c0}), 1, 1, "lstm",
                          false, true);
  ASSERT_EQ(outs.size(), 3u);
  float h = h0, c = c0;
  std::vector<float> expected;
  for (float x : {x0, x1}) {
    auto gate = [&](int k) { return w[k] * x + w[4 + k] * h + w[8 + k] + w[12 + k]; };
    c = sig(gate(1)) * c + sig(gate(0)) * std::tanh(gate(2));
    h = sig(gate(3)) * std::tanh(c);
    expected.push_back(h);
  }
  for (int t = 0; t < 2; ++t) EXPECT_NEAR(outs[0].to_vector()[t], expected[t], 1e-6) << t;
  EXPECT_NEAR(outs[1].to_vector()[0], h, 1e-6);
  EXPECT_NEAR(outs[2].to_vector()[0], c, 1e-6);

  // GRU, gates r, z, n: n = tanh(W_in x + b_in + r (W_hn h + b_hn)).
  const std::vector<float> g{0.5f, -0.25f, 1.0f, 0.1f, 0.2f, -0.3f, 0.05f, 0.1f, -0.1f, 0.3f, 0.1f, -0.2f};
  const Tensor y = F.RNN(Tensor::from_vector({1, 1, 1}, {x0}), Tensor::from_vector({12}, g),
                         Tensor::from_vector({1, 1, 1}, {h0}), Tensor(), 1, 1, "gru")[0];
  const float r = sig(g[0] * x0 + g[6] + g[3] * h0 + g[9]), z = sig(g[1] * x0 + g[7] + g[4] * h0 + g[10]);
  const float n = std::tanh(g[2] * x0 + g[8] + r * (g[5] * h0 + g[11]));
  EXPECT_NEAR(y.to_vector()[0], (1 - z) * n + z * h0, 1e-6);
}

TEST(RnnOp, RefusesWhatItDoesNotRun) {
  const Ops F;
  const Tensor x({3, 2, 4}), state({1, 2, 5});
  EXPECT_ERROR(F.RNN(x, Tensor({7}), state, state, 5, 1, "lstm"), "parameters has shape (7,), expected (220,)");
  EXPECT_ERROR(F.RNN(x, Tensor({220}), Tensor({1, 3, 5}), state, 5, 1, "lstm"), "state has shape (1, 3, 5)");
  EXPECT_ERROR(F.RNN(x, Tensor({220}), state, state, 5, 1, "lstm_x"), "expected one of");
  // Absurd sizes are refused before anything is sized from them.
  EXPECT_ERROR(F.RNN(x, Tensor({220}), state, state, int64_t{1} << 20, 1024, "lstm"), "more than a tensor may hold");
  EXPECT_ERROR(F.RNN(x, Tensor({220}), state, state, 5, 0, "lstm"), "num_layers must be in [1, 1024], got 0");
  EXPECT_ERROR(F.RNN(Tensor({3, 8}), Tensor({220}), state, state, 5, 1, "lstm"), "data must be (T, N, C), got (3, 8)");
  Attrs swap;
  swap.set("dim1", int64_t{0});
  swap.set("dim2", int64_t{3});
  EXPECT_ERROR(invoke("SwapAxis", {x}, swap), "dim2 = 3 is out of range for rank 3");
  swap.set("dim2", int64_t{-3});
  EXPECT_EQ(invoke("SwapAxis", {x}, swap)[0].shape(), (Shape{3, 2, 4}));
  swap.set("dim2", int64_t{2});
  EXPECT_EQ(invoke("SwapAxis", {x}, swap)[0].shape(), (Shape{4, 2, 3}));
  EXPECT_ERROR(invoke("RNN", {x, Tensor({220}), state, state},
                      [] {
                        Attrs a;
                        a.set("mode", std::string("lstm"));
                        a.set("num_layers", int64_t{1});
                        a.set("state_size", int64_t{5});
                        a.set("projection_size", int64_t{2});
                        return a;
                      }()),
               "projection_size is not supported");
}

TEST(RnnLayers, GluonParameterNamesAndShapes) {
  auto lstm = std::make_shared<rnn::LSTM>(6, 2, "TNC", 0.0, true, 3);
  std::vector<std::string> names;
  for (Parameter* p : lstm->collect_params()) names.push_back(p->name() + shape_str(p->shape()));
  const std::string prefix = lstm->prefix();
  EXPECT_EQ(names, (std::vector<std::string>{
                       prefix + "l0_i2h_weight(24, 3)", prefix + "l0_h2h_weight(24, 6)", prefix + "l0_i2h_bias(24,)",
                       prefix + "l0_h2h_bias(24,)", prefix + "r0_i2h_weight(24, 3)", prefix + "r0_h2h_weight(24, 6)",
                       prefix + "r0_i2h_bias(24,)", prefix + "r0_h2h_bias(24,)", prefix + "l1_i2h_weight(24, 12)",
                       prefix + "l1_h2h_weight(24, 6)", prefix + "l1_i2h_bias(24,)", prefix + "l1_h2h_bias(24,)",
                       prefix + "r1_i2h_weight(24, 12)", prefix + "r1_h2h_weight(24, 6)", prefix + "r1_i2h_bias(24,)",
                       prefix + "r1_h2h_bias(24,)"}));
  EXPECT_ERROR(rnn::RNN(4, 1, "sigmoid"), "mode must be");
  EXPECT_ERROR(rnn::GRU(4, 1, "CNT"), "layout must be TNC or NTC");
}

TEST(RnnLayers, StatesInAndOutAndLayouts) {
  auto gru = std::make_shared<rnn::GRU>(5);
  gru->initialize(init::Uniform(0.5f), 3);
  const Tensor x = Tensor::random_normal({4, 2, 3}, 0.0f, 1.0f, 11);  // (T, N, C)
  const Tensor out = (*gru)(x);
  EXPECT_EQ(out.shape(), (Shape{4, 2, 5}));
  const Tensor h0 = Tensor::random_normal({1, 2, 5}, 0.0f, 1.0f, 12);
  const std::vector<Tensor> with_states = (*gru)(std::vector<Tensor>{x, h0});
  ASSERT_EQ(with_states.size(), 2u);
  EXPECT_EQ(with_states[1].shape(), (Shape{1, 2, 5}));
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t j = 0; j < 5; ++j) EXPECT_EQ(with_states[1].at({0, n, j}), with_states[0].at({3, n, j}));
  const std::vector<Tensor> zero_state = (*gru)(std::vector<Tensor>{x, Tensor({1, 2, 5})});
  EXPECT_EQ(zero_state[0].to_vector(), out.to_vector());

  // NTC: the same numbers with the first two axes swapped.
  auto ntc = std::make_shared<rnn::GRU>(5, 1, "NTC");
  ntc->initialize(init::Uniform(0.5f), 3);
  for (std::size_t i = 0; i < gru->collect_params().size(); ++i)
    ntc->collect_params()[i]->set_data(gru->collect_params()[i]->data());
  const Tensor y = (*ntc)(Ops().transpose(x, {1, 0, 2}));
  EXPECT_EQ(y.shape(), (Shape{2, 4, 5}));
  EXPECT_LE(max_abs_diff(Ops().transpose(y, {1, 0, 2}), out), 0.0f);
}

// Eager and hybridized (the optimized graph on the interpreter): the same
// outputs. The generated kernels are checked op by op in tests/codegen.
TEST(RnnLayers, HybridizedMatchesEager) {
  const std::vector<std::shared_ptr<rnn::RecurrentLayer>> layers = {
      std::make_shared<rnn::LSTM>(7, 2, "NTC", 0.0, true), std::make_shared<rnn::GRU>(4, 1, "TNC", 0.0, true),
      std::make_shared<rnn::RNN>(5, 2, "relu"), std::make_shared<rnn::RNN>(3, 1, "tanh", "NTC")};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    SCOPED_TRACE(layers[i]->prefix());
    layers[i]->initialize(init::Uniform(0.3f), 5);
    const Tensor x = Tensor::random_normal({2, 3, 4}, 0.0f, 1.0f, 21 + i);
    const Tensor eager = (*layers[i])(x);
    HybridizeOptions interpreted;
    interpreted.compile = false;
    layers[i]->hybridize(true, interpreted);
    EXPECT_LE(max_abs_diff((*layers[i])(x), eager), 1e-6f);
    EXPECT_FALSE(layers[i]->first_call_cost()->compiled);
  }
}

}  // namespace
}  // namespace hybgen
