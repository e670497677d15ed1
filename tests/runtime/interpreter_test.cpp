// Interpreter: runs a Graph with the reference kernels in one planned arena;
// checks its inputs and its constants.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "runtime-lite/hybgen.h"

namespace hybgen {
namespace {

// y = relu(x W^T + b) with W = [[1, 2], [3, 4], [-1, -1]], b = [0, 1, 0].
Graph dense_graph(bool with_data) {
  Graph g;
  g.name = "dense";
  g.add_input("x", {{1, 2}});
  g.add_constant("w", Constant::f32({3, 2}, {1, 2, 3, 4, -1, -1}));
  g.add_constant("b", Constant::f32({3}, {0, 1, 0}));
  if (!with_data) g.constants["w"].data.clear();
  Attrs fc;
  fc.set("num_hidden", int64_t{3});
  Attrs relu;
  relu.set("act_type", std::string("relu"));
  g.nodes.push_back(Node{"fc", "FullyConnected", fc, {"x", "w", "b"}, {"fc"}});
  g.nodes.push_back(Node{"act", "Activation", relu, {"fc"}, {"act"}});
  g.outputs = {"act"};
  return g;
}

TEST(Interpreter, RunsAHandWrittenGraph) {
  Interpreter interp(dense_graph(true));
  const auto out = interp.run({{"x", Tensor::from_vector({1, 2}, {1, 1})}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector(), (std::vector<float>{3, 8, 0}));
  EXPECT_EQ(interp.graph().type("fc").shape, (Shape{1, 3}));  // shapes inferred by the pipeline
}

// x -> int32 (truncating) -> + k -> float32: values of another dtype inside
// the graph run where their ops' references compute them.
TEST(Interpreter, ValuesInsideTheGraphMayBeOfAnyDtypeTheReferencesCompute) {
  Graph g;
  g.add_input("x", {{4}});
  Constant k;
  k.type = TensorType{{4}, DType::kInt32};
  const int32_t values[] = {1, -1, 1000000, 0};
  k.data.assign(reinterpret_cast<const uint8_t*>(values), reinterpret_cast<const uint8_t*>(values) + sizeof values);
  g.add_constant("k", k);
  Attrs to_int, to_float;
  to_int.set("dtype", std::string("int32"));
  to_float.set("dtype", std::string("float32"));
  g.nodes.push_back(Node{"ints", "Cast", to_int, {"x"}, {"ints"}});
  g.nodes.push_back(Node{"sum", "elemwise_add", {}, {"ints", "k"}, {"sum"}});
  g.nodes.push_back(Node{"y", "Cast", to_float, {"sum"}, {"y"}});
  g.outputs = {"y"};
  Interpreter interp(g);
  EXPECT_EQ(interp.graph().type("sum").dtype, DType::kInt32);
  const auto out = interp.run({{"x", Tensor::from_vector({4}, {2.9f, -2.9f, 0.5f, -7.0f})}});
  EXPECT_EQ(out[0].to_vector(), (std::vector<float>{3, -3, 1000000, -7}));
}

TEST(Interpreter, NodesWhoseReferencesLackTheirDtypesAreNamedTogether) {
  Graph g;
  g.add_input("x", {{4}});
  g.add_input("codes", TensorType{{4}, DType::kInt32});
  Attrs to_int;
  to_int.set("dtype", std::string("int32"));
  g.nodes.push_back(Node{"ints", "Cast", to_int, {"x"}, {"ints"}});
  g.nodes.push_back(Node{"e", "exp", {}, {"ints"}, {"e"}});
  g.nodes.push_back(Node{"s", "sqrt", {}, {"codes"}, {"s"}});
  g.outputs = {"e", "s"};
  EXPECT_ERROR(Interpreter{g},
               "the interpreter cannot run this graph:\n"
               "  input 'codes' is int32 (inputs and outputs are float32 Tensors)\n"
               "  output 'e' is int32 (inputs and outputs are float32 Tensors)\n"
               "  output 's' is int32 (inputs and outputs are float32 Tensors)\n"
               "  node 'e' (exp): its values are int32; its reference computes float32, int8, uint8\n"
               "  node 's' (sqrt): its values are int32; its reference computes float32, int8, uint8");
}

TEST(Interpreter, InputErrorsNameTheInputAndShapes) {
  Interpreter interp(dense_graph(true));
  EXPECT_ERROR(interp.run({}), "input 'x' is missing, the graph expects shape (1, 2)");
  EXPECT_ERROR(interp.run({{"x", Tensor()}}), "input 'x' is an undefined tensor");
  EXPECT_ERROR(interp.run({{"x", Tensor({2, 2})}}), "input 'x' has shape (2, 2), the graph expects (1, 2)");
  EXPECT_ERROR(interp.run({{"x", Tensor({1, 2})}, {"y", Tensor({1})}}), "'y' is not an input of the graph");
}

TEST(Interpreter, ConstantsComeFromBindingsOrGraphData) {
  EXPECT_ERROR(Interpreter{dense_graph(false)}, "constant 'w' has no data");
  Tensor w = Tensor::from_vector({3, 2}, {1, 0, 0, 1, 1, 1});
  Interpreter bound(dense_graph(false), {{"w", w}});
  const Tensor x = Tensor::from_vector({1, 2}, {2, 3});
  EXPECT_EQ(bound.run({{"x", x}})[0].to_vector(), (std::vector<float>{2, 4, 5}));
  w.data()[0] = 10;  // shared storage: the interpreter sees the change
  EXPECT_EQ(bound.run({{"x", x}})[0].to_vector(), (std::vector<float>{20, 4, 5}));
  EXPECT_ERROR(Interpreter(dense_graph(true), {{"w", Tensor({2, 3})}}),
               "constant 'w': the bound tensor does not have shape (3, 2)");
}

TEST(Interpreter, OutputsAreFreshTensorsInGraphOrder) {
  const Tensor a = sym::var("a", {3});
  const Tensor doubled = a * 2.0f, shifted = a + 1.0f;
  Interpreter interp(sym::to_graph({shifted, doubled}, "two"));
  const Tensor x = Tensor::from_vector({3}, {1, 2, 3});
  auto first = interp.run({{"a", x}});
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].to_vector(), (std::vector<float>{2, 3, 4}));
  EXPECT_EQ(first[1].to_vector(), (std::vector<float>{2, 4, 6}));
  first[0].data()[0] = -1;
  EXPECT_EQ(interp.run({{"a", x}})[0].at({0}), 2.0f);
}

TEST(Interpreter, IntermediatesShareOnePlannedArena) {
  // A chain of five ops on 256 floats: four intermediates, at most two live
  // at once, so the arena holds two buffers, not four.
  Tensor t = sym::var("x", {256});
  for (int i = 0; i < 5; ++i) t = Ops().tanh(t);
  Interpreter interp(sym::to_graph({t}, "chain"));
  EXPECT_EQ(interp.plan().buffers.size(), 4u);
  EXPECT_LE(interp.plan().arena_bytes, 2u * 256 * sizeof(float));
  const Tensor x = Tensor::random_normal({256}, 0.0f, 1.0f, 5);
  Tensor expected = x;
  for (int i = 0; i < 5; ++i) expected = Ops().tanh(expected);
  EXPECT_EQ(interp.run({{"x", x}})[0].to_vector(), expected.to_vector());
}

}  // namespace
}  // namespace hybgen
