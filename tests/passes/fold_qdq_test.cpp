// fold_qdq: dequantize -> FullyConnected -> quantize becomes the int8 layer
// with an int32 bias; quantize(dequantize(x)) at equal parameters goes away.
#include <gtest/gtest.h>

#include <cstring>

#include "pass_test_support.h"

namespace hybgen {
namespace {

Constant int_constant(const TensorType& type, const std::vector<int32_t>& v) {
  Constant c;
  c.type = type;
  c.data.resize(type.bytes());
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (type.dtype == DType::kInt8)
      c.data[i] = static_cast<uint8_t>(static_cast<int8_t>(v[i]));
    else
      std::memcpy(c.data.data() + 4 * i, &v[i], 4);
  }
  return c;
}

Node node(const std::string& name, const std::string& op, std::vector<std::string> in, Attrs a = {}) {
  return Node{name, op, std::move(a), std::move(in), {name}};
}

// x -> quantize -> dequantize -> FullyConnected(dequantize(w), bias) -> quantize -> dequantize -> y
Graph qdq_dense() {
  Graph g;
  g.add_input("x", TensorType{{1, 4}});
  g.add_constant("w", int_constant(TensorType{{2, 4}, DType::kInt8, Quantization::per_axis(0, {0.5f, 0.25f}, {0, 0})},
                                   {1, -2, 3, 127, -127, 0, 5, 6}));
  g.add_constant("b", Constant::f32({2}, {1.0f, -0.5f}));
  Attrs q1, q2, fc;
  q1.set("out_scale", 0.1);
  q1.set("out_zero_point", int64_t{3});
  q2.set("out_scale", 0.2);
  q2.set("out_zero_point", int64_t{-1});
  fc.set("num_hidden", int64_t{2});
  g.nodes = {node("xq", "quantize", {"x"}, q1),  node("xd", "dequantize", {"xq"}),
             node("wd", "dequantize", {"w"}),    node("fc", "FullyConnected", {"xd", "wd", "b"}, fc),
             node("yq", "quantize", {"fc"}, q2), node("y", "dequantize", {"yq"})};
  g.outputs = {"y"};
  return testing::prepared(g);
}

TEST(FoldQdq, DenseBecomesInt8WithInt32Bias) {
  Graph g = qdq_dense();
  const auto before = testing::run_reference(g, {{"x", {0.3f, -1.0f, 2.0f, 0.05f}}});
  ASSERT_TRUE(fold_qdq(g));
  infer_shapes(g);
  EXPECT_EQ(testing::op_names(g), (std::vector<std::string>{"quantize", "FullyConnected", "dequantize"}));
  const Node& fc = g.nodes[1];
  EXPECT_EQ(fc.inputs[0], "xq");
  EXPECT_EQ(fc.inputs[1], "w");
  EXPECT_EQ(g.type(fc.inputs[2]).dtype, DType::kInt32);
  EXPECT_EQ(g.type("yq").quantization, Quantization::per_tensor(0.2f, -1));
  EXPECT_FALSE(g.is_constant("b"));
  // The bias is exact in int32 at scale 0.1 x w_scale, so the int8 layer gives
  // the float one's result within one output step.
  const auto after = testing::run_reference(g, {{"x", {0.3f, -1.0f, 2.0f, 0.05f}}});
  ASSERT_EQ(after[0].size(), before[0].size());
  for (std::size_t i = 0; i < after[0].size(); ++i) EXPECT_NEAR(after[0][i], before[0][i], 0.2f + 1e-6f);
  EXPECT_FALSE(fold_qdq(g));
}

TEST(FoldQdq, RemovesQuantizeOfDequantizeAtEqualParameters) {
  Graph g;
  g.add_input("x", TensorType{{3}});
  Attrs q;
  q.set("out_scale", 0.1);
  q.set("out_zero_point", int64_t{3});
  Attrs other = q;
  other.set("out_zero_point", int64_t{4});
  g.nodes = {node("a", "quantize", {"x"}, q), node("b", "dequantize", {"a"}),      node("c", "quantize", {"b"}, q),
             node("d", "dequantize", {"c"}),  node("e", "quantize", {"d"}, other), node("y", "dequantize", {"e"})};
  g.outputs = {"y"};
  g = testing::prepared(g);
  ASSERT_TRUE(fold_qdq(g));
  // a's pair with c goes; e quantizes at other parameters, so it stays.
  EXPECT_EQ(testing::op_names(g), (std::vector<std::string>{"quantize", "dequantize", "quantize", "dequantize"}));
  EXPECT_EQ(g.nodes[1].inputs[0], "a");
}

TEST(FoldQdq, AddOfDequantizedOperandsBecomesTheQuantizedAdd) {
  Graph g;
  g.add_input("x", TensorType{{2, 3}});
  g.add_constant("b", int_constant(TensorType{{3}, DType::kInt8, Quantization::per_tensor(0.05f, 0)}, {10, -20, 127}));
  Attrs q1, q2;
  q1.set("out_scale", 0.1);
  q1.set("out_zero_point", int64_t{3});
  q2.set("out_scale", 0.15);
  q2.set("out_zero_point", int64_t{-2});
  g.nodes = {node("xq", "quantize", {"x"}, q1),   node("xd", "dequantize", {"xq"}),
             node("bd", "dequantize", {"b"}),     node("add", "broadcast_add", {"xd", "bd"}),
             node("yq", "quantize", {"add"}, q2), node("y", "dequantize", {"yq"})};
  g.outputs = {"y"};
  g = testing::prepared(g);
  const std::vector<float> x = {0.3f, -1.0f, 2.0f, 0.05f, 1.5f, -0.7f};
  const auto before = testing::run_reference(g, {{"x", x}});
  ASSERT_TRUE(fold_qdq(g));
  infer_shapes(g);
  EXPECT_EQ(testing::op_names(g), (std::vector<std::string>{"quantize", "broadcast_add", "dequantize"}));
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{"xq", "b"}));
  const auto after = testing::run_reference(g, {{"x", x}});
  for (std::size_t i = 0; i < after[0].size(); ++i) EXPECT_NEAR(after[0][i], before[0][i], 0.15f + 1e-6f);
}

}  // namespace
}  // namespace hybgen
