// quantize_graph on a conv -> relu -> dense graph built in code, with ranges
// given by hand (the calibration that measures them is runtime-lite's,
// tests/runtime/calibration_test.cpp).
#include "passes/quantize_graph.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "graph_builders.h"
#include "ir/error.h"
#include "ops/op.h"

namespace hybgen {
namespace {

std::map<std::string, ValueRange> hand_ranges() {
  return {{"data", {-1.0f, 3.0f}}, {"conv", {-0.8f, 0.6f}}, {"relu", {0.0f, 0.6f}}, {"dense", {-0.2f, 0.3f}}};
}

const Node* node_of(const Graph& g, const std::string& name) {
  for (const Node& n : g.nodes)
    if (n.name == name) return &n;
  return nullptr;
}

const Node* producer_of(const Graph& g, const std::string& value) {
  const int i = g.producer(value);
  return i < 0 ? nullptr : &g.nodes[static_cast<std::size_t>(i)];
}

TEST(ActivationQuantization, TfliteScaleAndZeroPoint) {
  Quantization q = activation_quantization({-1.0f, 3.0f});
  EXPECT_FLOAT_EQ(q.scale[0], 4.0f / 255.0f);
  EXPECT_EQ(q.zero_point[0], -64);            // round(-128 + 63.75)
  q = activation_quantization({0.5f, 2.0f});  // widened to hold 0
  EXPECT_FLOAT_EQ(q.scale[0], 2.0f / 255.0f);
  EXPECT_EQ(q.zero_point[0], -128);
  q = activation_quantization({-2.0f, -1.0f});
  EXPECT_EQ(q.zero_point[0], 127);
  q = activation_quantization({0.0f, 0.0f});
  EXPECT_GT(q.scale[0], 0.0f);
  EXPECT_THROW(activation_quantization({0.0f, std::numeric_limits<float>::infinity()}), Error);
  EXPECT_THROW(activation_quantization({-3e38f, 3e38f}), Error);
}

TEST(QuantizeGraph, ConvReluDenseTypes) {
  const Graph g = testing::conv_relu_dense();
  const QuantizedGraph q = quantize_graph(g, hand_ranges());
  const Graph& out = q.graph;
  // The interface is the float one.
  EXPECT_EQ(out.inputs, g.inputs);
  EXPECT_EQ(out.outputs, g.outputs);
  EXPECT_EQ(out.type("data"), (TensorType{{1, 2, 6, 6}}));
  EXPECT_EQ(out.type("dense"), (TensorType{{1, 3}}));
  EXPECT_EQ(producer_of(out, "dense")->op, "dequantize");

  // The convolution: int8 data from a quantize of the input, int8 weight
  // per output channel, int32 bias at data scale x weight scale.
  const Node* conv = node_of(out, "conv");
  ASSERT_NE(conv, nullptr);
  const TensorType& x = out.type(conv->inputs[0]);
  EXPECT_EQ(producer_of(out, conv->inputs[0])->op, "quantize");
  EXPECT_EQ(x.dtype, DType::kInt8);
  EXPECT_EQ(x.quantization, activation_quantization({-1.0f, 3.0f}));
  const TensorType& w = out.type(conv->inputs[1]);
  EXPECT_EQ(w.dtype, DType::kInt8);
  ASSERT_EQ(w.quantization.scale.size(), 4u);
  EXPECT_EQ(w.quantization.axis, 0);
  EXPECT_EQ(w.quantization.zero_point, std::vector<int64_t>(4, 0));
  const Constant& wc = out.constants.at(conv->inputs[1]);
  const auto* wq = reinterpret_cast<const int8_t*>(wc.data.data());
  for (int c = 0; c < 4; ++c) {
    int peak = 0;
    for (int i = 0; i < 18; ++i) peak = std::max(peak, std::abs(static_cast<int>(wq[c * 18 + i])));
    EXPECT_EQ(peak, 127) << "channel " << c;  // symmetric: max |w_c| maps to 127
  }
  const TensorType& b = out.type(conv->inputs[2]);
  EXPECT_EQ(b.dtype, DType::kInt32);
  for (int c = 0; c < 4; ++c)
    EXPECT_FLOAT_EQ(b.quantization.scale[c], x.quantization.scale[0] * w.quantization.scale[c]);

  // The dense layer: int8, its output scale from its own range.
  const Node* dense = node_of(out, "dense");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(out.type(dense->outputs[0]).dtype, DType::kInt8);
  EXPECT_EQ(out.type(dense->outputs[0]).quantization, activation_quantization({-0.2f, 0.3f}));

  // relu keeps its input's quantization, so the convolution takes relu's
  // range (post-activation): relu costs no precision.
  EXPECT_EQ(out.type("conv").quantization, activation_quantization({0.0f, 0.6f}));
  EXPECT_EQ(out.type("relu"), out.type("conv"));
  EXPECT_EQ(node_of(out, "dense")->inputs[0], "relu");
  EXPECT_TRUE(q.float_nodes.empty());
  EXPECT_EQ(q.int8_nodes, (std::vector<std::string>{"conv", "relu", "dense"}));
  EXPECT_EQ(std::count(q.int8_nodes.begin(), q.int8_nodes.end(), "conv"), 1);
  EXPECT_EQ(std::count(q.int8_nodes.begin(), q.int8_nodes.end(), "dense"), 1);
  // No float weight is left behind.
  for (const auto& [name, c] : out.constants) EXPECT_NE(c.type.dtype, DType::kFloat32) << name;
}

// An op without an int8 form (LayerNorm: no integer method keeps it within
// one step) stays float between a dequantize and a quantize, the tool says
// why, and the layer before it keeps its own range.
TEST(QuantizeGraph, MixedPrecision) {
  Graph g = testing::conv_relu_dense();
  g.add_constant("gamma", Constant::f32({4}, testing::seeded_values(4, 41)));
  g.add_constant("beta", Constant::f32({4}, testing::seeded_values(4, 42)));
  g.nodes[1] = testing::make_node("relu", "LayerNorm", {"conv", "gamma", "beta"});
  auto ranges = hand_ranges();
  ranges["relu"] = {-0.3f, 0.65f};
  const QuantizedGraph q = quantize_graph(g, ranges);
  const Graph& out = q.graph;
  EXPECT_EQ(out.type("conv").quantization, activation_quantization({-0.8f, 0.6f}));
  const Node* norm = node_of(out, "relu");
  ASSERT_NE(norm, nullptr);
  EXPECT_EQ(out.type("relu").dtype, DType::kFloat32);
  EXPECT_EQ(producer_of(out, norm->inputs[0])->op, "dequantize");
  EXPECT_EQ(out.type("gamma").dtype, DType::kFloat32);
  const Node* dense = node_of(out, "dense");
  const Node* requantize = producer_of(out, dense->inputs[0]);
  EXPECT_EQ(requantize->op, "quantize");
  EXPECT_EQ(requantize->inputs[0], "relu");
  EXPECT_EQ(out.type(dense->inputs[0]).quantization, activation_quantization({-0.3f, 0.65f}));
  ASSERT_EQ(q.float_nodes.size(), 1u);
  EXPECT_EQ(q.float_nodes[0].node, "relu");
  EXPECT_EQ(q.float_nodes[0].reason, "op LayerNorm has no int8 reference");
}

// Elementwise functions go int8 by a lookup table into their own output
// range; the layer before keeps its own (the table is not a relu).
TEST(QuantizeGraph, ElementwiseFunctionsTakeATableIntoTheirOwnRange) {
  for (const char* act : {"sigmoid", "tanh", "softrelu"}) {
    SCOPED_TRACE(act);
    Graph g = testing::conv_relu_dense();
    g.nodes[1].attrs.set("act_type", std::string(act));
    auto ranges = hand_ranges();
    ranges["relu"] = {0.3f, 0.65f};
    const QuantizedGraph q = quantize_graph(g, ranges);
    const Graph& out = q.graph;
    EXPECT_TRUE(q.float_nodes.empty());
    EXPECT_EQ(out.type("conv").quantization, activation_quantization({-0.8f, 0.6f}));
    const Node* table = node_of(out, "relu");
    ASSERT_NE(table, nullptr);
    EXPECT_EQ(table->inputs[0], "conv");
    EXPECT_EQ(out.type("relu").dtype, DType::kInt8);
    // sigmoid and tanh take their whole output range, as TFLite fixes their scales; others the calibrated one.
    const ValueRange own = std::string(act) == "sigmoid" ? ValueRange{0.0f, 1.0f}
                           : std::string(act) == "tanh"  ? ValueRange{-1.0f, 1.0f}
                                                         : ValueRange{0.3f, 0.65f};
    EXPECT_EQ(out.type("relu").quantization, activation_quantization(own));
    EXPECT_TRUE(table->attrs.has("out_scale"));
    EXPECT_EQ(node_of(out, "dense")->inputs[0], "relu");
  }
  // GELU (LeakyReLU, whose prelu form has a weight) and exp the same way.
  for (const auto& [op, attrs] : std::vector<std::pair<std::string, Attrs>>{
           {"LeakyReLU", testing::attrs_of({{"act_type", std::string("gelu")}})}, {"exp", Attrs{}}}) {
    Graph g = testing::conv_relu_dense();
    g.nodes[1] = testing::make_node("relu", op, {"conv"}, attrs);
    const QuantizedGraph q = quantize_graph(g, hand_ranges());
    EXPECT_TRUE(q.float_nodes.empty()) << op << ": " << q.float_nodes[0].reason;
    EXPECT_EQ(q.graph.type("relu").quantization, activation_quantization({0.0f, 0.6f})) << op;
  }
  // A relu keeps the exact form (its input's quantization), with no table.
  const QuantizedGraph relu = quantize_graph(testing::conv_relu_dense(), hand_ranges());
  EXPECT_FALSE(node_of(relu.graph, "relu")->attrs.has("out_scale"));
}

// data -> conv_a -> relu_a, data -> conv_b; Concat(relu_a, conv_b) -> dense.
Graph concat_graph() {
  Graph g = testing::conv_relu_dense();
  g.add_constant("conv_b_weight", Constant::f32({2, 2, 3, 3}, testing::seeded_values(2 * 2 * 9, 43)));
  g.add_constant("conv_b_bias", Constant::f32({2}, testing::seeded_values(2, 44)));
  g.constants["dense_weight"] = Constant::f32({3, 96}, testing::seeded_values(3 * 96, 45));
  g.types["dense_weight"] = g.constants["dense_weight"].type;
  g.nodes.insert(
      g.nodes.begin() + 2,
      {testing::make_node("conv_b", "Convolution", {"data", "conv_b_weight", "conv_b_bias"},
                          testing::attrs_of({{"kernel", std::vector<int64_t>{3, 3}}, {"num_filter", int64_t{2}}})),
       testing::make_node("cat", "Concat", {"relu", "conv_b"}, testing::attrs_of({{"dim", int64_t{1}}}))});
  g.nodes.back().inputs[0] = "cat";
  return g;
}

std::map<std::string, ValueRange> concat_ranges() {
  auto r = hand_ranges();
  r["conv_b"] = {-0.5f, 0.2f};
  r["cat"] = {-0.5f, 0.6f};
  return r;
}

// Concat's int8 output takes its own range (the union of its inputs'); the
// layers that only it reads produce straight into that range (through a
// relu too), so it copies them instead of requantizing.
TEST(QuantizeGraph, ConcatTakesItsRangeAndItsInputsTakeItToo) {
  const QuantizedGraph q = quantize_graph(concat_graph(), concat_ranges());
  const Graph& out = q.graph;
  EXPECT_TRUE(q.float_nodes.empty());
  const Quantization cat = activation_quantization({-0.5f, 0.6f});
  EXPECT_EQ(out.type("cat").dtype, DType::kInt8);
  EXPECT_EQ(out.type("cat").quantization, cat);
  EXPECT_EQ(out.type("conv").quantization, cat);
  EXPECT_EQ(out.type("relu").quantization, cat);
  EXPECT_EQ(out.type("conv_b").quantization, cat);
  // Every input in the output's quantization: the Concat keeps it and only copies.
  EXPECT_EQ(node_of(out, "cat")->inputs, (std::vector<std::string>{"relu", "conv_b"}));
  EXPECT_FALSE(node_of(out, "cat")->attrs.has("out_scale"));
}

// An input read elsewhere too keeps its own range; Concat requantizes it.
TEST(QuantizeGraph, ConcatRequantizesAnInputWithARangeOfItsOwn) {
  Graph g = concat_graph();
  g.outputs.push_back("conv_b");
  const QuantizedGraph q = quantize_graph(g, concat_ranges());
  const Graph& out = q.graph;
  EXPECT_TRUE(q.float_nodes.empty());
  const Node* cat = node_of(out, "cat");
  ASSERT_NE(cat, nullptr);
  EXPECT_EQ(out.type("cat").quantization, activation_quantization({-0.5f, 0.6f}));
  EXPECT_EQ(out.type(cat->inputs[1]).quantization, activation_quantization({-0.5f, 0.2f}));
  EXPECT_EQ(out.type("relu").quantization, out.type("cat").quantization);
}

// Concat of float values stays float (int8 would only add conversions).
TEST(QuantizeGraph, ConcatOfFloatValuesStaysFloat) {
  Graph g;
  g.add_input("a", {{1, 3}});
  g.add_input("b", {{1, 2}});
  g.nodes.push_back(testing::make_node("cat", "Concat", {"a", "b"}, testing::attrs_of({{"dim", int64_t{1}}})));
  g.outputs = {"cat"};
  const QuantizedGraph q = quantize_graph(g, {{"a", {-1.0f, 1.0f}}, {"b", {0.0f, 2.0f}}, {"cat", {-1.0f, 2.0f}}});
  ASSERT_EQ(q.float_nodes.size(), 1u);
  EXPECT_EQ(q.graph.type("cat").dtype, DType::kFloat32);
}

// Attention's core: two projections, q k^T by batch_dot, softmax; all int8.
TEST(QuantizeGraph, BatchDotAndSoftmax) {
  Graph g;
  g.add_input("x", {{2, 3, 4}});
  for (const char* p : {"q", "k"}) {
    g.add_constant(std::string(p) + "_weight", Constant::f32({8, 4}, testing::seeded_values(32, p[0])));
    g.add_constant(std::string(p) + "_bias", Constant::f32({8}, testing::seeded_values(8, p[0] + 1)));
    g.nodes.push_back(testing::make_node(p, "FullyConnected",
                                         {"x", std::string(p) + "_weight", std::string(p) + "_bias"},
                                         testing::attrs_of({{"num_hidden", int64_t{8}}, {"flatten", false}})));
  }
  g.nodes.push_back(testing::make_node("scores", "batch_dot", {"q", "k"}, testing::attrs_of({{"transpose_b", true}})));
  g.nodes.push_back(testing::make_node("prob", "softmax", {"scores"}));
  g.outputs = {"prob"};
  const std::map<std::string, ValueRange> ranges{{"x", {-2.0f, 2.0f}},
                                                 {"q", {-1.0f, 1.2f}},
                                                 {"k", {-0.9f, 0.8f}},
                                                 {"scores", {-3.0f, 4.0f}},
                                                 {"prob", {0.0f, 0.9f}}};
  const QuantizedGraph q = quantize_graph(g, ranges);
  const Graph& out = q.graph;
  EXPECT_TRUE(q.float_nodes.empty());
  EXPECT_EQ(q.int8_nodes, (std::vector<std::string>{"q", "k", "scores", "prob"}));
  const Node* scores = node_of(out, "scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->inputs, (std::vector<std::string>{"q", "k"}));
  EXPECT_EQ(out.type("scores").quantization, activation_quantization({-3.0f, 4.0f}));
  const Node* prob = producer_of(out, producer_of(out, "prob")->inputs[0]);
  ASSERT_NE(prob, nullptr);
  EXPECT_EQ(prob->op, "softmax");
  EXPECT_EQ(out.type(prob->outputs[0]).quantization, activation_quantization({0.0f, 1.0f}));  // all of [0, 1]
  EXPECT_EQ(producer_of(out, "prob")->op, "dequantize");
}

// A classifier's softmax head: int8 into all of [0, 1] (a calibrated range
// would clip the top class's probability), dequantized for the output.
TEST(QuantizeGraph, SoftmaxHead) {
  Graph g = testing::conv_relu_dense();
  g.nodes.push_back(testing::make_node("prob", "softmax", {"dense"}));
  g.outputs = {"prob"};
  auto ranges = hand_ranges();
  ranges["prob"] = {0.1f, 0.6f};
  const QuantizedGraph q = quantize_graph(g, ranges);
  const Graph& out = q.graph;
  EXPECT_TRUE(q.float_nodes.empty());
  const Node* dequantize = producer_of(out, "prob");
  ASSERT_EQ(dequantize->op, "dequantize");
  const Node* softmax = producer_of(out, dequantize->inputs[0]);
  EXPECT_EQ(softmax->op, "softmax");
  EXPECT_EQ(softmax->inputs[0], "dense");
  EXPECT_EQ(out.type(softmax->outputs[0]).dtype, DType::kInt8);
  EXPECT_EQ(out.type(softmax->outputs[0]).quantization, activation_quantization({0.0f, 1.0f}));
}

TEST(QuantizeGraph, KeepFloat) {
  QuantizeOptions options;
  options.keep_float = {"dense"};
  const QuantizedGraph q = quantize_graph(testing::conv_relu_dense(), hand_ranges(), options);
  const Node* dense = node_of(q.graph, "dense");
  ASSERT_NE(dense, nullptr);
  EXPECT_EQ(q.graph.type("dense"), (TensorType{{1, 3}}));
  EXPECT_EQ(q.graph.type(dense->inputs[1]).dtype, DType::kFloat32);
  EXPECT_TRUE(std::any_of(q.float_nodes.begin(), q.float_nodes.end(),
                          [](const FloatNode& f) { return f.node == "dense" && f.reason == "--keep-float"; }));
  EXPECT_EQ(q.graph.type("conv").dtype, DType::kInt8);

  options.keep_float = {"nope"};
  EXPECT_THROW(quantize_graph(testing::conv_relu_dense(), hand_ranges(), options), Error);
}

TEST(QuantizeGraph, MissingRangeIsAnError) {
  auto ranges = hand_ranges();
  ranges.erase("data");
  try {
    quantize_graph(testing::conv_relu_dense(), ranges);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'data'"), std::string::npos) << e.what();
  }
  ranges = hand_ranges();
  ranges["conv"].max = std::numeric_limits<float>::quiet_NaN();
  EXPECT_THROW(quantize_graph(testing::conv_relu_dense(), ranges), Error);
}

}  // namespace
}  // namespace hybgen
