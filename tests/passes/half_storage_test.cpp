// half_storage (--precision fp16/bf16, CUDA): float32 values become halves
// wherever the node's kernel computes them; weights are converted, the
// graph's edges stay float32 under their names, and a node without a half
// kernel keeps float32 behind _storage_cast nodes.
#include <gtest/gtest.h>

#include <algorithm>

#include "error_matchers.h"
#include "ir/half.h"
#include "pass_test_support.h"
#include "pipeline.h"
#include "targets/target.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;
using testing::op_names;
using testing::prepared;

Target cuda_at(Precision precision) {
  Target t = find_target("cuda-host");
  t.precision = precision;
  return t;
}

// data -> abs -> add(w) = "sum" (an output) -> tanh = "out" (an output).
Graph elementwise_chain() {
  Graph g;
  g.add_input("data", {{2, 3}});
  g.add_constant("w", Constant::f32({2, 3}, {0.1f, -1.0f, 3.14159f, 1e-3f, 70000.0f, -2.5f}));
  g.nodes.push_back(make_node("relu", "abs", {"data"}));
  g.nodes.push_back(make_node("sum", "elemwise_add", {"relu", "w"}));
  g.nodes.push_back(make_node("out", "Activation", {"sum"}, attrs_of({{"act_type", std::string("tanh")}})));
  g.outputs = {"sum", "out"};
  return prepared(g);
}

const Node& made_by(const Graph& g, const std::string& value) {
  const int p = g.producer(value);
  EXPECT_GE(p, 0) << value;
  return g.nodes[static_cast<std::size_t>(p)];
}

TEST(HalfStorage, ValuesWeightsAndEdges) {
  for (Precision precision : {Precision::kFP16, Precision::kBF16}) {
    const DType half = precision == Precision::kFP16 ? DType::kFloat16 : DType::kBFloat16;
    Graph g = elementwise_chain();
    ASSERT_TRUE(half_storage(g, cuda_at(precision)));
    infer_shapes(g);
    validate(g);
    // The edges keep their names and float32.
    EXPECT_EQ(g.inputs, std::vector<std::string>{"data"});
    EXPECT_EQ(g.outputs, (std::vector<std::string>{"sum", "out"}));
    for (const char* edge : {"data", "sum", "out"}) EXPECT_EQ(g.type(edge).dtype, DType::kFloat32) << edge;
    // The input enters half storage once; the nodes compute halves.
    const Node& relu = g.nodes[static_cast<std::size_t>(g.producer(g.nodes[1].outputs[0]))];
    EXPECT_EQ(made_by(g, relu.inputs[0]).op, "_storage_cast");
    for (const Node& n : g.nodes) {
      if (n.op == "_storage_cast") continue;
      EXPECT_EQ(g.type(n.outputs[0]).dtype, half) << n.name;
      for (const auto& in : n.inputs) EXPECT_EQ(g.type(in).dtype, half) << n.name << " reads " << in;
    }
    // The outputs are casts of the half values, and tanh reads sum's half value, not the float32 output.
    EXPECT_EQ(made_by(g, "sum").op, "_storage_cast");
    EXPECT_EQ(made_by(g, "out").op, "_storage_cast");
    const Node& tanh = made_by(g, made_by(g, "out").inputs[0]);
    EXPECT_EQ(tanh.op, "Activation");
    EXPECT_EQ(tanh.inputs[0], made_by(g, "sum").inputs[0]);
    // The weight is converted, rounded to nearest (70000 is past float16's range), and the float32 copy is gone.
    EXPECT_FALSE(g.is_constant("w"));
    const Node& sum = made_by(g, tanh.inputs[0]);
    const Constant& w = g.constants.at(sum.inputs[1]);
    ASSERT_EQ(w.type.dtype, half);
    const auto* bits = reinterpret_cast<const uint16_t*>(w.data.data());
    const float values[] = {0.1f, -1.0f, 3.14159f, 1e-3f, 70000.0f, -2.5f};
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(bits[i], half == DType::kFloat16 ? float_to_half(values[i]) : float_to_bfloat16(values[i])) << i;
    const std::vector<std::string> ops = op_names(g);
    EXPECT_EQ(std::count(ops.begin(), ops.end(), "_storage_cast"), 3);
  }
}

TEST(HalfStorage, HalfEdgesTakeTheHalfTypeWithoutCasts) {
  Graph g = elementwise_chain();
  ASSERT_TRUE(half_storage(g, cuda_at(Precision::kBF16), /*half_edges=*/true));
  infer_shapes(g);
  validate(g);
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"abs", "elemwise_add", "Activation"}));
  for (const char* edge : {"data", "sum", "out"}) EXPECT_EQ(g.type(edge).dtype, DType::kBFloat16) << edge;
  // A float32 node reads a half input through a cast, and its output edge keeps float32 (indices past 256).
  Graph arg;
  arg.add_input("data", {{2, 300}});
  arg.nodes.push_back(make_node("index", "argmax", {"data"}, attrs_of({{"axis", int64_t{1}}})));
  arg.outputs = {"index"};
  arg = prepared(arg);
  ASSERT_TRUE(half_storage(arg, cuda_at(Precision::kBF16), true));
  infer_shapes(arg);
  validate(arg);
  EXPECT_EQ(op_names(arg), (std::vector<std::string>{"_storage_cast", "argmax"}));
  EXPECT_EQ(arg.type("data").dtype, DType::kBFloat16);
  EXPECT_EQ(arg.type("index").dtype, DType::kFloat32);
}

TEST(HalfStorage, ANodeWithoutAHalfKernelKeepsFloat32) {
  // argmax's output holds indices, which bfloat16 holds exactly only up to 256: its CUDA kernel is float32 only.
  Graph g;
  g.add_input("data", {{2, 300}});
  g.nodes.push_back(make_node("relu", "abs", {"data"}));
  g.nodes.push_back(make_node("index", "argmax", {"relu"}, attrs_of({{"axis", int64_t{1}}})));
  g.outputs = {"index"};
  g = prepared(g);
  ASSERT_TRUE(half_storage(g, cuda_at(Precision::kBF16)));
  infer_shapes(g);
  validate(g);
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"_storage_cast", "abs", "_storage_cast", "argmax"}));
  EXPECT_EQ(g.type(g.nodes[1].outputs[0]).dtype, DType::kBFloat16);
  EXPECT_EQ(g.type(g.nodes[3].inputs[0]).dtype, DType::kFloat32);
  EXPECT_EQ(g.type("index").dtype, DType::kFloat32);
  check_kernels(g, cuda_at(Precision::kBF16));
}

TEST(HalfStorage, OnlyFp16AndBf16OnTheCudaTargets) {
  for (Precision precision : {Precision::kFP32, Precision::kTF32}) {
    Graph g = elementwise_chain();
    const Graph before = g;
    EXPECT_FALSE(half_storage(g, cuda_at(precision)));
    EXPECT_EQ(op_names(g), op_names(before));
  }
  CompileOptions cpu = CompileOptions::for_target(find_target("generic"));
  cpu.target.precision = Precision::kFP16;
  EXPECT_ERROR(compile_graph(elementwise_chain(), cpu), "--precision fp16: target generic computes exact float32");
  // The compiled graph passes check_kernels.
  CompileOptions cuda = CompileOptions::for_target(cuda_at(Precision::kFP16));
  const CompiledGraph compiled = compile_graph(elementwise_chain(), cuda);
  bool any_half = false;
  for (const auto& [value, type] : compiled.graph.types) any_half = any_half || type.dtype == DType::kFloat16;
  EXPECT_TRUE(any_half);
}

}  // namespace
}  // namespace hybgen
