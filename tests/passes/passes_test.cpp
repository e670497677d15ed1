// Before/after tests of each pass, and the error each bad graph must give.
#include <gtest/gtest.h>

#include "error_matchers.h"

#include <algorithm>
#include <functional>

#include "fusion_graphs.h"
#include "graph_builders.h"
#include "ir/error.h"
#include "ops/gemm_pack.h"
#include "passes/passes.h"
#include "pipeline.h"

namespace hybgen {
namespace {

using testing::error_of;

using testing::attrs_of;
using testing::make_node;

Graph relu_chain(int n) {
  Graph g;
  g.add_input("x", {{4}});
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string name = "r" + std::to_string(i);
    g.nodes.push_back(make_node(name, "Activation", {prev}, attrs_of({{"act_type", std::string("relu")}})));
    prev = name;
  }
  g.outputs = {prev};
  return g;
}

TEST(Validate, FillsDefaultsAndAcceptsGoodGraphs) {
  Graph g = testing::seed_mlp();
  EXPECT_TRUE(validate(g));
  EXPECT_TRUE(g.nodes[0].attrs.get_bool("flatten"));
  EXPECT_FALSE(validate(g));  // already normalized
}

TEST(Validate, ListsAllUnknownOpsInOneError) {
  Graph g = relu_chain(3);
  g.nodes[0].op = "Foo";
  g.nodes[2].op = "Bar";
  const std::string message = error_of([&] { validate(g); });
  EXPECT_NE(message.find("node 'r0' (Foo)"), std::string::npos) << message;
  EXPECT_NE(message.find("node 'r2' (Bar)"), std::string::npos) << message;
}

TEST(Validate, RejectsMalformedGraphs) {
  Graph dangling = relu_chain(2);
  dangling.nodes[1].inputs = {"r9"};
  EXPECT_ERROR(validate(dangling), "node 'r1' (Activation): input 'r9' is not defined");

  Graph cycle = relu_chain(3);
  cycle.nodes[0].inputs = {"r2"};
  EXPECT_ERROR(validate(cycle), "cycle through nodes");

  Graph twice = relu_chain(2);
  twice.nodes[1].outputs = {"r0"};
  EXPECT_ERROR(validate(twice), "value 'r0' is defined twice");

  Graph arity = testing::seed_mlp();
  arity.nodes[0].inputs.pop_back();  // bias missing while no_bias=false
  EXPECT_ERROR(validate(arity), "node 'dense0_fwd' (FullyConnected): has 2 inputs, expected 3");

  Graph bad_attr = relu_chain(1);
  bad_attr.nodes[0].attrs.set("act_type", std::string("swish"));
  EXPECT_ERROR(validate(bad_attr), "node 'r0' (Activation): attribute 'act_type' is 'swish'");

  Graph no_output = relu_chain(1);
  no_output.outputs = {"nothing"};
  EXPECT_ERROR(validate(no_output), "graph output 'nothing' is not defined");
}

TEST(InferShapes, ComputesEveryValueAndNamesTheFailingNode) {
  Graph g = testing::seed_mlp();
  validate(g);
  EXPECT_TRUE(infer_shapes(g));
  EXPECT_EQ(g.type("dense0_fwd").shape, (Shape{1, 256}));
  EXPECT_EQ(g.type("dense2_fwd").shape, (Shape{1, 2}));
  EXPECT_FALSE(infer_shapes(g));

  Graph bad = testing::seed_mlp();
  bad.constants["dense1_weight"].type.shape = {128, 300};
  bad.types["dense1_weight"].shape = {128, 300};
  validate(bad);
  EXPECT_ERROR(infer_shapes(bad), "node 'dense1_fwd' (FullyConnected): weight has shape (128, 300), expected (128, 256)");
}

TEST(RemoveIdentities, DropsDropoutInTheMiddleAndAtTheOutput) {
  Graph g = relu_chain(2);
  g.nodes.insert(g.nodes.begin() + 1, make_node("drop", "Dropout", {"r0"}));
  g.nodes[2].inputs = {"drop"};
  g.nodes.push_back(make_node("drop_out", "Dropout", {"r1"}));
  g.outputs = {"drop_out"};
  validate(g);
  infer_shapes(g);
  EXPECT_TRUE(remove_identities(g));
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"r0"}));
  EXPECT_EQ(g.outputs, (std::vector<std::string>{"drop_out"}));  // the output keeps its name
  EXPECT_EQ(g.nodes[1].outputs, (std::vector<std::string>{"drop_out"}));
  EXPECT_EQ(g.type("drop_out").shape, (Shape{4}));
  EXPECT_FALSE(remove_identities(g));
}

TEST(RemoveIdentities, KeepsACopyOfAGraphInputThatIsAnOutput) {
  Graph g;
  g.add_input("x", {{3}});
  g.nodes.push_back(make_node("y", "_copy", {"x"}));
  g.outputs = {"y"};
  validate(g);
  EXPECT_FALSE(remove_identities(g));
  EXPECT_EQ(g.nodes.size(), 1u);
}

// A quantized relu is a max with the zero point: at int8's lowest value
// (TFLite's relu after a convolution) it changes nothing and goes; at
// another zero point it stays.
TEST(RemoveIdentities, DropsAnInt8ReluAtItsTypesLowestValue) {
  for (const int64_t zero_point : {int64_t{-128}, int64_t{-7}}) {
    SCOPED_TRACE(zero_point);
    Graph g;
    g.add_input("x", {{2, 8}, DType::kInt8, Quantization::per_tensor(0.05f, zero_point)});
    g.nodes.push_back(make_node("r", "Activation", {"x"}, attrs_of({{"act_type", std::string("relu")}})));
    g.nodes.push_back(make_node("y", "Activation", {"r"}, attrs_of({{"act_type", std::string("relu")}})));
    g.outputs = {"y"};
    validate(g);
    infer_shapes(g);
    EXPECT_EQ(remove_identities(g), zero_point == -128);
    EXPECT_EQ(g.nodes.size(), zero_point == -128 ? 1u : 2u);
  }
}

TEST(Schedule, OrdersShuffledNodesAndKeepsValidOrders) {
  Graph g = relu_chain(4);
  EXPECT_FALSE(schedule(g));
  std::reverse(g.nodes.begin(), g.nodes.end());
  EXPECT_TRUE(schedule(g));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(g.nodes[i].name, "r" + std::to_string(i));
}

TEST(PlanMemory, SeedMlpArenaEqualsTheLowerBound) {
  const CompiledGraph c = compile_graph(testing::seed_mlp());
  // Fused: dense0 + relu (256 floats) is still live while dense1 + relu
  // (128 floats) is written.
  EXPECT_EQ(c.plan.lower_bound_bytes, 1536u);
  EXPECT_EQ(c.plan.arena_bytes, c.plan.lower_bound_bytes);
  EXPECT_EQ(c.plan.naive_bytes, c.plan.arena_bytes);
  // Unfused, the relu outputs are buffers of their own.
  const CompiledGraph unfused = compile_graph(testing::seed_mlp(), CompileOptions::for_target(default_target(), false));
  EXPECT_EQ(unfused.plan.lower_bound_bytes, 2048u);  // dense0_fwd and its relu, 256 floats each
  EXPECT_EQ(unfused.plan.arena_bytes, unfused.plan.lower_bound_bytes);
  EXPECT_GT(unfused.plan.naive_bytes, unfused.plan.arena_bytes);
  EXPECT_EQ(c.plan.find("data"), nullptr);       // caller's input
  EXPECT_EQ(c.plan.find("dense2_fwd"), nullptr); // caller's output
  for (const auto& b : c.plan.buffers) EXPECT_EQ(b.offset % 64, 0u);
  c.plan.verify();
}

TEST(PlanMemory, TutorialMemoryExampleNeedsOneTenFloatBuffer) {
  const CompiledGraph c = compile_graph(testing::tutorial_memory());
  EXPECT_LE(c.plan.arena_bytes, 40u);
}

TEST(PlanMemory, VerifyCatchesOverlappingLiveBuffers) {
  const MemoryPlan good = compile_graph(testing::seed_mlp()).plan;
  ASSERT_EQ(good.blocks.size(), 2u);
  MemoryPlan plan = good;
  plan.blocks[1].offset = plan.blocks[0].offset;  // dense0's and dense1's results are live together
  EXPECT_ERROR(plan.verify(), "overlap while both are live");
  plan.blocks[1].offset = 3;
  EXPECT_ERROR(plan.verify(), "not 64-byte aligned");
  plan = good;
  plan.buffers[0].offset += 64;
  EXPECT_ERROR(plan.verify(), "leaves its block");
}

TEST(PlanMemory, KeepsTheBestOfSeveralPlacementOrders) {
  // A long-lived small buffer born first, then a chain of big short-lived ones:
  // placing by first use puts the small one at 0 and the big ones above it.
  Graph g;
  g.add_input("x", {{16}});
  g.nodes.push_back(make_node("small", "Activation", {"x"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("big1", "broadcast_add", {"x", "x"}));
  g.nodes.push_back(make_node("big1b", "broadcast_mul", {"big1", "big1"}));
  g.nodes.push_back(make_node("big2", "broadcast_add", {"big1b", "small"}));
  g.outputs = {"big2"};
  const CompiledGraph c = compile_graph(g);
  c.plan.verify();
  EXPECT_LE(c.plan.arena_bytes, 3 * 64u);
  EXPECT_FALSE(c.plan.strategy.empty());
}

// The plan holds the scratch of the kernels the target runs: generic code
// convolves through im2col columns, AVX-512 code row by row without them.
TEST(PlanMemory, ScratchIsWhatTheTargetsKernelsTake) {
  const Graph g = testing::conv_with_operands();  // 4 -> 6 channels, 3x3, padded, on 5x5
  auto scratch_bytes = [](const CompiledGraph& c) {
    std::size_t bytes = 0;
    for (const auto& b : c.plan.buffers)
      if (b.value.size() > 8 && b.value.compare(b.value.size() - 8, 8, "#scratch") == 0) bytes += b.bytes;
    return bytes;
  };
  const CompiledGraph generic = compile_graph(g);
  const CompiledGraph avx512 = compile_graph(g, {true, nullptr, find_target("x86-64-v4")});
  EXPECT_EQ(generic.target.name, "generic");
  EXPECT_EQ(avx512.target.name, "x86-64-v4");
  EXPECT_EQ(scratch_bytes(generic), 4u * 9 * 25 * sizeof(float));  // a column of 36 values per output pixel
  EXPECT_EQ(scratch_bytes(avx512), 0u);
  EXPECT_LT(avx512.plan.arena_bytes, generic.plan.arena_bytes);
  avx512.plan.verify();
}

// Columns that would set the arena shrink, with small_arena, to 16-pixel
// tiles beside the activations; without it the plan keeps them whole and
// says what shrinking would give.
TEST(PlanMemory, SmallArenaShrinksIm2colTilesIntoTheRoomTheActivationsLeave) {
  const Graph g = testing::im2col_convolutions();
  auto buffer_bytes = [](const CompiledGraph& c, const std::string& value) {
    const BufferPlacement* b = c.plan.find(value);
    return b ? b->bytes : 0;
  };
  // x86-64-v3, not -v4: there these few-channel convolutions keep their
  // filters in the vector lanes (conv2d_filter_lanes.inc), without im2col.
  for (const char* target : {"generic", "x86-64-v3"}) {
    SCOPED_TRACE(target);
    CompileOptions options{true, nullptr, find_target(target)};
    const CompiledGraph full = compile_graph(g, options);
    EXPECT_EQ(buffer_bytes(full, "a#scratch"), 32u * 56 * sizeof(float));
    EXPECT_EQ(buffer_bytes(full, "b#scratch"), 64u * 42 * sizeof(float));
    EXPECT_EQ(full.plan.lower_bound_bytes, (224u + 64 * 42) * sizeof(float));
    EXPECT_EQ(full.plan.small_arena_bound, (224u + 64 * 16) * sizeof(float));
    options.small_arena = true;
    const CompiledGraph small = compile_graph(g, options);
    small.plan.verify();
    EXPECT_EQ(buffer_bytes(small, "a#scratch"), 32u * 16 * sizeof(float));
    EXPECT_EQ(buffer_bytes(small, "b#scratch"), 64u * 16 * sizeof(float));
    EXPECT_EQ(small.plan.lower_bound_bytes, full.plan.small_arena_bound);
    EXPECT_EQ(small.plan.arena_bytes, small.plan.lower_bound_bytes);
    EXPECT_LT(small.plan.arena_bytes * 2, full.plan.arena_bytes);
  }
  // Nothing to shrink: the seed MLP has no scratch.
  EXPECT_EQ(compile_graph(testing::seed_mlp()).plan.small_arena_bound, 0u);
}

TEST(Pipeline, ObserverSeesEveryPassInOrder) {
  std::vector<std::string> seen;
  CompileOptions options;
  options.observer = [&](const std::string& pass, const CompiledGraph&) { seen.push_back(pass); };
  compile_graph(testing::seed_mlp(), options);
  EXPECT_EQ(seen, pass_names());
  seen.clear();
  options.optimize = false;
  compile_graph(testing::seed_mlp(), options);
  EXPECT_EQ(seen, pass_names(options));
}

}  // namespace
}  // namespace hybgen
