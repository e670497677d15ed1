// fuse, schedule_kernels and plan_memory's sharing, before/after on small
// graphs: kernel counts (tinygrad's check_schedule) and which values share
// bytes. Numerics of the same graphs as generated C++ are in
// tests/codegen/fusion_codegen_test.cpp.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "fusion_graphs.h"
#include "graph_builders.h"
#include "passes/passes.h"
#include "passes/quantize_graph.h"
#include "pipeline.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;

std::vector<std::string> node_names(const Graph& g, const Kernel& k) {
  std::vector<std::string> names;
  for (int index : k.nodes) names.push_back(g.nodes[index].name);
  return names;
}

TEST(Fuse, SeedMlpIsThreeKernels) {
  const CompiledGraph c = compile_graph(testing::seed_mlp());
  ASSERT_EQ(c.kernels.size(), 3u);
  EXPECT_EQ(c.kernels[0].kind, KernelKind::kEpilogue);
  EXPECT_EQ(node_names(c.graph, c.kernels[0]), (std::vector<std::string>{"dense0_fwd", "dense0_relu"}));
  EXPECT_EQ(c.kernels[0].outputs, std::vector<std::string>{"dense0_relu"});  // dense0_fwd stays in registers
  EXPECT_EQ(c.kernels[2].kind, KernelKind::kOp);
}

TEST(Fuse, TutorialMultiplyAddIsOneLoop) {
  const CompiledGraph c = compile_graph(testing::tutorial_memory());
  ASSERT_EQ(c.kernels.size(), 1u);
  EXPECT_EQ(c.kernels[0].kind, KernelKind::kElementwise);
  EXPECT_EQ(c.kernels[0].inputs, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(c.plan.arena_bytes, 0u);
}

TEST(Fuse, ResNetBasicBlockIsTwoConvolutionKernels) {
  // conv-BN-relu-conv-BN, + x, relu: BatchNorm folds into the convolutions,
  // the relu into the first one's epilogue, the add and relu into the second's.
  const CompiledGraph c = compile_graph(testing::resnet_basic_block());
  ASSERT_EQ(c.kernels.size(), 2u);
  for (const Kernel& k : c.kernels) {
    EXPECT_EQ(k.kind, KernelKind::kEpilogue);
    EXPECT_EQ(c.graph.nodes[k.nodes[0]].op, "Convolution");
  }
  EXPECT_EQ(c.kernels[1].outputs, std::vector<std::string>{"out"});
  EXPECT_NE(std::find(c.kernels[1].inputs.begin(), c.kernels[1].inputs.end(), "data"), c.kernels[1].inputs.end());
}

TEST(Fuse, AValueReadOutsideIsStoredAndStopsTheKernel) {
  // relu's result feeds both the sigmoid (fusable) and a softmax (not): the
  // kernel stores it, and the sigmoid, read after the softmax, still joins.
  Graph g;
  g.add_input("x", {{4, 8}});
  g.nodes.push_back(make_node("r", "Activation", {"x"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("s", "Activation", {"r"}, attrs_of({{"act_type", std::string("sigmoid")}})));
  g.nodes.push_back(make_node("p", "softmax", {"r"}));
  g.nodes.push_back(make_node("sum", "broadcast_add", {"s", "p"}));
  g.outputs = {"sum"};
  validate(g);
  infer_shapes(g);
  const std::vector<Kernel> kernels = fuse(g);
  ASSERT_EQ(kernels.size(), 3u);
  EXPECT_EQ(node_names(g, kernels[0]), (std::vector<std::string>{"r", "s"}));
  EXPECT_EQ(kernels[0].outputs, (std::vector<std::string>{"r", "s"}));
  EXPECT_EQ(node_names(g, kernels[1]), std::vector<std::string>{"p"});
  EXPECT_EQ(node_names(g, kernels[2]), std::vector<std::string>{"sum"});
}

TEST(Fuse, EpilogueTakesOnlyOperandsItCanIndex) {
  // A per-channel bias and a same-shape residual join a convolution's
  // epilogue; an operand broadcast along the spatial axes does not.
  Graph g = testing::conv_with_operands();
  validate(g);
  infer_shapes(g);
  const std::vector<Kernel> kernels = fuse(g);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(node_names(g, kernels[0]), (std::vector<std::string>{"conv", "add_channel", "add_residual"}));
  EXPECT_EQ(kernels[1].kind, KernelKind::kElementwise);
  EXPECT_EQ(node_names(g, kernels[1]), (std::vector<std::string>{"mul_rows", "relu"}));
}

// A float layer's kernel stores float, so a quantize after it is a loop of
// its own; an int8 layer's kernels store what their epilogue returns, so a
// dequantize joins it.
TEST(Fuse, AnEpilogueAfterAFloatLayerStaysFloat) {
  Graph g = testing::seed_mlp();
  g.nodes.push_back(
      make_node("q", "quantize", {"dense2_fwd"},
                attrs_of({{"out_scale", 0.05}, {"out_zero_point", int64_t{3}}, {"out_dtype", std::string("int8")}})));
  g.nodes.push_back(make_node("dq", "dequantize", {"q"}));
  g.outputs = {"dq"};
  const CompiledGraph c = compile_graph(g);
  ASSERT_EQ(c.kernels.size(), 4u);
  EXPECT_EQ(node_names(c.graph, c.kernels[2]), std::vector<std::string>{"dense2_fwd"});
  EXPECT_EQ(node_names(c.graph, c.kernels[3]), (std::vector<std::string>{"q", "dq"}));

  const QuantizedGraph q = quantize_graph(
      testing::conv_relu_dense(),
      {{"data", {-1.0f, 3.0f}}, {"conv", {-0.8f, 0.6f}}, {"relu", {0.0f, 0.6f}}, {"dense", {-0.2f, 0.3f}}});
  const CompiledGraph int8 = compile_graph(q.graph);
  const Kernel& last = int8.kernels.back();
  EXPECT_EQ(last.kind, KernelKind::kEpilogue);
  EXPECT_EQ(int8.graph.nodes[static_cast<std::size_t>(last.nodes.back())].op, "dequantize");
}

TEST(PlanMemory, ViewsAndPlacedConcatInputsShareBytes) {
  const CompiledGraph c = compile_graph(testing::concat_of_branches());
  c.plan.verify();
  const BufferPlacement* cat = c.plan.find("cat");
  const BufferPlacement* left = c.plan.find("left");
  const BufferPlacement* right = c.plan.find("right");
  const BufferPlacement* flat = c.plan.find("flat");
  ASSERT_TRUE(cat && left && right && flat);
  EXPECT_EQ(left->offset, cat->offset);                    // first slice
  EXPECT_EQ(right->offset, cat->offset + left->bytes);     // second slice
  EXPECT_EQ(flat->offset, cat->offset);                    // a view of cat
  EXPECT_EQ(left->block, cat->block);
  // Nothing needs more than the concat itself and the final result.
  EXPECT_EQ(c.plan.arena_bytes, c.plan.lower_bound_bytes);
}

TEST(PlanMemory, ElementwiseResultsReuseTheBufferOfAnInputThatDies) {
  // tanh(x) -> softmax -> relu: the relu loop writes over softmax's result.
  Graph g;
  g.add_input("x", {{2, 64}});
  g.nodes.push_back(make_node("t", "Activation", {"x"}, attrs_of({{"act_type", std::string("tanh")}})));
  g.nodes.push_back(make_node("p", "softmax", {"t"}));
  g.nodes.push_back(make_node("r", "Activation", {"p"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("m", "softmax", {"r"}));
  g.outputs = {"m"};
  const CompiledGraph c = compile_graph(g);
  ASSERT_TRUE(c.plan.find("p") && c.plan.find("r"));
  EXPECT_EQ(c.plan.find("r")->offset, c.plan.find("p")->offset);
  EXPECT_EQ(c.plan.find("r")->block, c.plan.find("p")->block);
  // Off: every value on its own.
  const CompiledGraph plain = compile_graph(g, CompileOptions::for_target(default_target(), false));
  EXPECT_NE(plain.plan.find("r")->block, plain.plan.find("p")->block);
}

TEST(ScheduleKernels, BranchOrderLowersPeakMemory) {
  // Two branches from x: a big one (64x64 intermediates) and a small one.
  // Running the big branch's reduction before starting the small branch keeps
  // only one big buffer alive.
  const Graph g = testing::unbalanced_branches();
  const CompiledGraph c = compile_graph(g);
  c.plan.verify();
  const CompiledGraph plain = compile_graph(g, CompileOptions::for_target(default_target(), false));
  EXPECT_LT(c.plan.arena_bytes, plain.plan.arena_bytes);
  EXPECT_EQ(c.plan.arena_bytes, c.plan.lower_bound_bytes);
}

}  // namespace
}  // namespace hybgen
