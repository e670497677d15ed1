// dequantize_graph: an int8 graph (quantize_graph's, on hand-given ranges)
// back to the float graph it approximates, as compile_graph does for a
// target without int8 kernels (CUDA).
#include <gtest/gtest.h>

#include <algorithm>

#include "pass_test_support.h"
#include "passes/quantize_graph.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {
namespace {

using testing::int8_conv_relu_dense;
using testing::op_names;
using testing::prepared;

TEST(DequantizeGraph, GivesTheFloatLayersOnDequantizedWeights) {
  const Graph float_graph = prepared(testing::conv_relu_dense());
  const Graph int8 = int8_conv_relu_dense();
  ASSERT_EQ(op_names(int8),
            (std::vector<std::string>{"quantize", "Convolution", "Activation", "FullyConnected", "dequantize"}));
  Graph g = int8;
  EXPECT_TRUE(dequantize_graph(g));
  infer_shapes(g);
  remove_identities(g);
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"Convolution", "Activation", "FullyConnected"}));
  EXPECT_EQ(g.inputs, float_graph.inputs);
  EXPECT_EQ(g.outputs, float_graph.outputs);  // the dequantize's output name, now the dense layer's
  for (const auto& [name, type] : g.types) {
    EXPECT_EQ(type.dtype, DType::kFloat32) << name;
    EXPECT_TRUE(type.quantization.empty()) << name;
  }
  for (const Node& n : g.nodes) {
    EXPECT_FALSE(n.attrs.has("out_scale")) << n.name;
    EXPECT_FALSE(n.attrs.has("out_zero_point")) << n.name;
  }
  // Each weight holds scale_c * q: the int8 weight's real values.
  const Constant& q = int8.constants.at("conv_weight");
  const auto* qv = reinterpret_cast<const int8_t*>(q.data.data());
  const std::vector<float> w = testing::values_of(g, "conv_weight");
  ASSERT_EQ(w.size(), 4u * 18u);
  for (std::size_t i = 0; i < w.size(); ++i)
    EXPECT_FLOAT_EQ(w[i], q.type.quantization.scale[i / 18] * static_cast<float>(qv[i])) << i;
  // The int32 bias, at data scale x weight scale, as floats.
  const Constant& qb = int8.constants.at("conv_bias");
  const auto* bv = reinterpret_cast<const int32_t*>(qb.data.data());
  const std::vector<float> b = testing::values_of(g, "conv_bias");
  for (std::size_t c = 0; c < 4; ++c)
    EXPECT_FLOAT_EQ(b[c], qb.type.quantization.scale[c] * static_cast<float>(bv[c])) << c;
  // Only the weights' rounding separates it from the float model.
  testing::expect_same_results(float_graph, g, 0.02);
  // A float graph has nothing to rewrite.
  Graph again = g;
  EXPECT_FALSE(dequantize_graph(again));
}

// CUDA has no int8 kernels: compile_graph dequantizes there, and only there.
TEST(DequantizeGraph, RunsOnTargetsWithoutInt8Kernels) {
  for (const Target& t : all_targets()) {
    SCOPED_TRACE(t.name);
    const std::vector<std::string> names = pass_names(CompileOptions::for_target(t));
    const bool listed = std::find(names.begin(), names.end(), "dequantize_graph") != names.end();
    EXPECT_EQ(listed, t.int8_through_float);
    EXPECT_EQ(t.int8_through_float, t.backend == Backend::kCuda);
  }
  for (bool optimize : {true, false}) {
    SCOPED_TRACE(optimize ? "optimized" : "unoptimized");
    const CompiledGraph cuda =
        compile_graph(int8_conv_relu_dense(), CompileOptions::for_target(find_target("cuda"), optimize));
    for (const auto& [name, type] : cuda.graph.types) EXPECT_TRUE(type.quantization.empty()) << name;
    const CompiledGraph cpp =
        compile_graph(int8_conv_relu_dense(), CompileOptions::for_target(default_target(), optimize));
    // (its relu, at the int8 zero point -128, is gone: remove_identities)
    EXPECT_EQ(cpp.graph.type("conv").dtype, DType::kInt8);
  }
}

}  // namespace
}  // namespace hybgen
