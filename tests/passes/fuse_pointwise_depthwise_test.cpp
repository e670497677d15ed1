// fuse_pointwise_depthwise: which 1x1 -> [relu | clip] -> depthwise chains
// become one _pointwise_depthwise_conv node, and that the graph computes the
// same values afterwards (the fused op's reference kernel against the three
// nodes'). Its generated kernel is checked by the registry op test and the
// MobileNet zoo tests.
#include <gtest/gtest.h>

#include "graph_builders.h"
#include "pipeline.h"
#include "pass_test_support.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::expect_same_results;
using testing::make_node;
using testing::op_names;
using testing::prepared;
using testing::seeded_values;

struct Chain {
  int64_t channels = 4, expanded = 12, size = 10, stride = 1;
  std::string activation = "clip";  // "clip", "relu" or "none"
  bool pointwise_bias = true;
};

// x -> conv1x1 (expanded) -> activation -> depthwise 3x3 -> clip -> y
Graph chain(const Chain& c) {
  Graph g;
  g.add_input("x", {{1, c.channels, c.size, c.size}});
  g.add_constant("w1", Constant::f32({c.expanded, c.channels, 1, 1}, seeded_values(c.expanded * c.channels, 1)));
  g.add_constant("b1", Constant::f32({c.expanded}, seeded_values(c.expanded, 2)));
  g.add_constant("w2", Constant::f32({c.expanded, 1, 3, 3}, seeded_values(c.expanded * 9, 3)));
  g.add_constant("b2", Constant::f32({c.expanded}, seeded_values(c.expanded, 4)));
  std::vector<std::string> pointwise_inputs{"x", "w1"};
  if (c.pointwise_bias) pointwise_inputs.push_back("b1");
  g.nodes.push_back(make_node("expand", "Convolution", pointwise_inputs,
                              attrs_of({{"kernel", std::vector<int64_t>{1, 1}},
                                        {"num_filter", c.expanded},
                                        {"no_bias", !c.pointwise_bias}})));
  std::string mid = "expand";
  if (c.activation == "clip") {
    g.nodes.push_back(make_node("act", "clip", {mid}, attrs_of({{"a_min", 0.0}, {"a_max", 6.0}})));
    mid = "act";
  } else if (c.activation == "relu") {
    g.nodes.push_back(make_node("act", "Activation", {mid}, attrs_of({{"act_type", std::string("relu")}})));
    mid = "act";
  }
  g.nodes.push_back(make_node("dw", "Convolution", {mid, "w2", "b2"},
                              attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                        {"pad", std::vector<int64_t>{1, 1}},
                                        {"stride", std::vector<int64_t>{c.stride, c.stride}},
                                        {"num_filter", c.expanded},
                                        {"num_group", c.expanded}})));
  g.nodes.push_back(make_node("y", "clip", {"dw"}, attrs_of({{"a_min", 0.0}, {"a_max", 6.0}})));
  g.outputs = {"y"};
  return prepared(g);
}

TEST(FusePointwiseDepthwise, FusesConvClipDepthwise) {
  Graph g = chain({});
  const Graph before = g;
  EXPECT_TRUE(fuse_pointwise_depthwise(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"_pointwise_depthwise_conv", "clip"}));
  const Node& fused = g.nodes[0];
  EXPECT_EQ(fused.name, "expand_dw");
  EXPECT_EQ(fused.inputs, (std::vector<std::string>{"x", "w1", "b1", "w2", "b2"}));
  EXPECT_EQ(fused.outputs, (std::vector<std::string>{"dw"}));
  EXPECT_EQ(fused.attrs.get_string("act_type"), "clip");
  EXPECT_EQ(fused.attrs.get_float("a_max"), 6.0);
  EXPECT_EQ(g.types.count("expand"), 0u);
  EXPECT_EQ(g.types.count("act"), 0u);
  infer_shapes(g);
  expect_same_results(before, g);
  EXPECT_FALSE(fuse_pointwise_depthwise(g));
}

TEST(FusePointwiseDepthwise, ReluNoActivationStrideTwoAndAMissingBias) {
  for (const std::string activation : {"relu", "none"}) {
    SCOPED_TRACE(activation);
    Chain c;
    c.activation = activation;
    c.stride = 2;
    c.pointwise_bias = false;
    Graph g = chain(c);
    const Graph before = g;
    ASSERT_TRUE(fuse_pointwise_depthwise(g));
    EXPECT_EQ(g.nodes[0].attrs.get_string("act_type"), activation);
    EXPECT_EQ(g.nodes[0].inputs[2], "expand_bias");
    EXPECT_EQ(testing::values_of(g, "expand_bias"), std::vector<float>(12, 0.0f));
    infer_shapes(g);
    expect_same_results(before, g);
  }
}

TEST(FusePointwiseDepthwise, LeavesChainsItDoesNotPayFor) {
  // No expansion: the input, a block and the output live at once would take
  // more arena than the two convolutions.
  Chain narrow;
  narrow.expanded = 4;
  Graph same_width = chain(narrow);
  EXPECT_FALSE(fuse_pointwise_depthwise(same_width));

  // An input over 1 MiB per image would be read from beyond L2 once per block.
  Chain large;
  large.size = 160;
  large.channels = 12;
  large.expanded = 24;
  Graph big = chain(large);
  EXPECT_FALSE(fuse_pointwise_depthwise(big));
}

TEST(FusePointwiseDepthwise, LeavesValuesOthersReadAndOtherOps) {
  Graph output = chain({});
  output.outputs.push_back("act");
  EXPECT_FALSE(fuse_pointwise_depthwise(output));

  Graph second_reader = chain({});
  second_reader.nodes.push_back(make_node("also", "clip", {"expand"}, attrs_of({{"a_min", 0.0}, {"a_max", 1.0}})));
  second_reader.outputs.push_back("also");
  second_reader = prepared(second_reader);
  EXPECT_FALSE(fuse_pointwise_depthwise(second_reader));

  Graph sigmoid = chain({});
  sigmoid.nodes[1] = make_node("act", "Activation", {"expand"}, attrs_of({{"act_type", std::string("sigmoid")}}));
  sigmoid = prepared(sigmoid);
  EXPECT_FALSE(fuse_pointwise_depthwise(sigmoid));

  // A dense 3x3 convolution after the 1x1 is no depthwise one.
  Graph dense = chain({});
  dense.nodes[2].attrs.set("num_group", int64_t{1});
  dense.add_constant("w2", Constant::f32({12, 12, 3, 3}, seeded_values(12 * 12 * 9, 3)));
  dense = prepared(dense);
  EXPECT_FALSE(fuse_pointwise_depthwise(dense));
}

TEST(FusePointwiseDepthwise, LeavesAsymmetricPadding) {
  // The fused op pads symmetrically: a depthwise convolution with pad_end
  // (ONNX's asymmetric pads), or a 1x1 one padded at the end, stays apart.
  Graph depthwise = chain({});
  depthwise.nodes[2].attrs.set("pad_end", std::vector<int64_t>{2, 1});
  depthwise = prepared(depthwise);
  EXPECT_FALSE(fuse_pointwise_depthwise(depthwise));

  Graph pointwise = chain({});
  pointwise.nodes[0].attrs.set("pad", std::vector<int64_t>{0, 0});
  pointwise.nodes[0].attrs.set("pad_end", std::vector<int64_t>{1, 0});
  pointwise.nodes[2].attrs.set("pad", std::vector<int64_t>{1, 1});
  pointwise = prepared(pointwise);
  EXPECT_FALSE(fuse_pointwise_depthwise(pointwise));
}

TEST(FusePointwiseDepthwise, RunsInThePipelineAfterFoldingAndBeforeSchedule) {
  const std::vector<std::string> names = pass_names();
  const auto at = [&](const char* pass) { return std::find(names.begin(), names.end(), pass) - names.begin(); };
  EXPECT_LT(at("fold_constants"), at("fuse_pointwise_depthwise"));
  EXPECT_LT(at("fuse_pointwise_depthwise"), at("schedule"));
  const CompiledGraph compiled = compile_graph(chain({}));
  ASSERT_EQ(compiled.kernels.size(), 1u);
  EXPECT_EQ(compiled.kernels[0].kind, KernelKind::kEpilogue);  // the trailing clip
}

}  // namespace
}  // namespace hybgen
