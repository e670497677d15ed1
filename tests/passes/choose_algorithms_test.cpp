// choose_algorithms: each convolution's C++ kernel chosen once for the target
// and recorded on its Kernel, and the memory plan sized from that record.
#include <gtest/gtest.h>

#include "graph_builders.h"
#include "passes/passes.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;
using testing::seeded_values;

const char* const kCppTargets[] = {"generic", "x86-64-v3", "x86-64-v4", "armv8-a", "cortex-m4", "cortex-m55"};

// The weights "w" of `shape`: a graph input with `as_input`, else a constant.
void add_weights(Graph& g, const Shape& shape, bool as_input, uint32_t seed) {
  if (as_input)
    g.add_input("w", {shape});
  else
    g.add_constant("w", Constant::f32({shape}, seeded_values(num_elements(shape), seed)));
}

// x (1, 16, 12, 12) -> 3x3 convolution, 16 filters, pad 1, in `groups`
// groups; the weights a constant, or a graph input with `weights_as_input`.
Graph conv3x3(bool weights_as_input, int64_t groups = 1) {
  Graph g;
  g.add_input("x", {{1, 16, 12, 12}});
  add_weights(g, {16, 16 / groups, 3, 3}, weights_as_input, 7);
  g.nodes.push_back(make_node("conv", "Convolution", {"x", "w"},
                              attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                        {"num_filter", int64_t{16}},
                                        {"pad", std::vector<int64_t>{1, 1}},
                                        {"num_group", groups},
                                        {"no_bias", true}})));
  g.outputs = {"conv"};
  return g;
}

const Kernel& only_kernel(const CompiledGraph& c) {
  EXPECT_EQ(c.kernels.size(), 1u);
  return c.kernels.front();
}

TEST(ChooseAlgorithms, ConvolutionWithKnownWeightsTakesAKernelThatReadsThemPacked) {
  for (const char* target : kCppTargets) {
    for (bool optimize : {true, false}) {
      SCOPED_TRACE(std::string(target) + (optimize ? "" : ", unoptimized"));
      const CompiledGraph c = compile_graph(conv3x3(false), CompileOptions::for_target(find_target(target), optimize));
      const Kernel& k = only_kernel(c);
      EXPECT_NE(k.algorithm, "");
      EXPECT_NE(k.algorithm, "direct");
      EXPECT_NE(k.algorithm, "depthwise");
      // The plan holds the scratch the recorded kernel asks for, no other.
      const std::size_t scratch = kernel_scratch_bytes(c.graph, k, c.target);
      const BufferPlacement* planned = c.plan.find(scratch_value(k));
      EXPECT_EQ(planned ? planned->bytes : 0u, scratch);
    }
  }
}

// Weights fed as inputs cannot be packed at generation time: the direct and
// depthwise kernels read them as they are, and need no scratch.
TEST(ChooseAlgorithms, WeightsFedAsAnInputTakeAnUnpackedKernelWithoutScratch) {
  for (const char* target : kCppTargets) {
    SCOPED_TRACE(target);
    const CompiledGraph dense = compile_graph(conv3x3(true), CompileOptions::for_target(find_target(target)));
    EXPECT_EQ(only_kernel(dense).algorithm, "direct");
    EXPECT_EQ(dense.plan.find(scratch_value(only_kernel(dense))), nullptr);
    const CompiledGraph depthwise = compile_graph(conv3x3(true, 16), CompileOptions::for_target(find_target(target)));
    EXPECT_EQ(only_kernel(depthwise).algorithm, "depthwise");
    EXPECT_EQ(depthwise.plan.find(scratch_value(only_kernel(depthwise))), nullptr);
  }
}

// x (1, 8, 6, 6) -> 2x2 transposed convolution, stride 2, 4 filters.
Graph deconv2x2(bool weights_as_input) {
  Graph g;
  g.add_input("x", {{1, 8, 6, 6}});
  add_weights(g, {8, 4, 2, 2}, weights_as_input, 9);
  g.nodes.push_back(make_node("up", "Deconvolution", {"x", "w"},
                              attrs_of({{"kernel", std::vector<int64_t>{2, 2}},
                                        {"stride", std::vector<int64_t>{2, 2}},
                                        {"num_filter", int64_t{4}},
                                        {"no_bias", true}})));
  g.outputs = {"up"};
  return g;
}

TEST(ChooseAlgorithms, DeconvolutionTakesTheGemmWithKnownWeightsAndTheDirectLoopsWithout) {
  for (const char* target : kCppTargets) {
    SCOPED_TRACE(target);
    const CompiledGraph known = compile_graph(deconv2x2(false), CompileOptions::for_target(find_target(target)));
    EXPECT_EQ(only_kernel(known).algorithm, "gemm");
    EXPECT_NE(known.plan.find(scratch_value(only_kernel(known))), nullptr);
    const CompiledGraph fed = compile_graph(deconv2x2(true), CompileOptions::for_target(find_target(target)));
    EXPECT_EQ(only_kernel(fed).algorithm, "direct");
    EXPECT_EQ(fed.plan.find(scratch_value(only_kernel(fed))), nullptr);
  }
}

TEST(ChooseAlgorithms, OpsWithOneKernelAndTheCudaBackendRecordNone) {
  EXPECT_EQ(only_kernel(compile_graph(conv3x3(false), CompileOptions::for_target(find_target("cuda")))).algorithm, "");
  Graph g;
  g.add_input("x", {{4, 8}});
  g.nodes.push_back(make_node("s", "softmax", {"x"}));
  g.outputs = {"s"};
  EXPECT_EQ(only_kernel(compile_graph(g, CompileOptions::for_target(find_target("x86-64-v4")))).algorithm, "");
}

}  // namespace
}  // namespace hybgen
