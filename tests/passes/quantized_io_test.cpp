// quantized_io (--io-precision quantized): a quantized graph's inputs and
// outputs become its integers; every float edge is named at once.
#include <gtest/gtest.h>

#include <algorithm>

#include "error_matchers.h"
#include "pass_test_support.h"
#include "passes/quantize_graph.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {
namespace {

using testing::int8_conv_relu_dense;
using testing::op_names;
using testing::prepared;

TEST(QuantizedIo, TheEdgesTakeTheQuantizedTypesAndKeepTheirNames) {
  Graph g = int8_conv_relu_dense();
  ASSERT_EQ(op_names(g),
            (std::vector<std::string>{"quantize", "Convolution", "Activation", "FullyConnected", "dequantize"}));
  const Node& quantize = g.nodes.front();
  const TensorType entering = g.type(quantize.outputs[0]);
  const TensorType leaving = g.type(g.nodes.back().inputs[0]);
  EXPECT_TRUE(quantized_io(g));
  infer_shapes(g);
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"Convolution", "Activation", "FullyConnected"}));
  EXPECT_EQ(g.inputs, std::vector<std::string>{"data"});
  EXPECT_EQ(g.outputs, std::vector<std::string>{"dense"});
  EXPECT_EQ(g.type("data"), entering);
  EXPECT_EQ(g.type("data").dtype, DType::kInt8);
  EXPECT_EQ(g.type("dense"), leaving);
  EXPECT_EQ(g.nodes.front().inputs[0], "data");
  EXPECT_EQ(g.nodes.back().outputs[0], "dense");
  validate(g);
  // Integer edges have nothing left to rewrite.
  EXPECT_FALSE(quantized_io(g));
}

TEST(QuantizedIo, EveryFloatEdgeIsNamedAtOnce) {
  Graph g = prepared(testing::conv_relu_dense());
  EXPECT_ERROR(quantized_io(g), "input 'data' is read by 'conv' (Convolution), not only by a quantize");
  EXPECT_ERROR(quantized_io(g), "output 'dense' is made by 'dense' (FullyConnected), not a dequantize");
  // A second reader of the input that is not a quantize.
  Graph mixed = int8_conv_relu_dense();
  mixed.nodes.push_back(
      testing::make_node("side", "Activation", {"data"}, testing::attrs_of({{"act_type", std::string("relu")}})));
  mixed.outputs.push_back("side");
  infer_shapes(mixed);
  const Graph before = mixed;
  EXPECT_ERROR(quantized_io(mixed), "input 'data' is read by 'side' (Activation)");
  // Nothing changes when it refuses, though the output 'dense' alone would pass.
  EXPECT_EQ(op_names(mixed), op_names(before));
  EXPECT_EQ(mixed.types, before.types);
}

TEST(QuantizedIo, RunsAfterFoldQdqAndNotOnTargetsWithoutInt8Kernels) {
  for (bool optimize : {true, false}) {
    CompileOptions options = CompileOptions::for_target(default_target(), optimize);
    const std::vector<std::string> plain = pass_names(options);
    EXPECT_EQ(std::count(plain.begin(), plain.end(), "quantized_io"), 0);
    options.io_precision = IoPrecision::kQuantized;
    const std::vector<std::string> names = pass_names(options);
    const auto at = std::find(names.begin(), names.end(), "quantized_io");
    ASSERT_NE(at, names.end());
    EXPECT_EQ(*(at - 1), optimize ? "fold_qdq" : "remove_identities");
    const CompiledGraph compiled = compile_graph(int8_conv_relu_dense(), options);
    EXPECT_EQ(compiled.graph.type("data").dtype, DType::kInt8);
    EXPECT_EQ(compiled.graph.type("dense").dtype, DType::kInt8);
  }
  CompileOptions cuda = CompileOptions::for_target(find_target("cuda"));
  cuda.io_precision = IoPrecision::kQuantized;
  EXPECT_ERROR(compile_graph(int8_conv_relu_dense(), cuda), "target cuda has no int8 kernels");
  EXPECT_ERROR(parse_io_precision("int4"), "--io-precision 'int4': expected fp32, quantized or half");
}

}  // namespace
}  // namespace hybgen
