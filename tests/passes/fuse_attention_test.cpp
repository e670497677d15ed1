// fuse_attention: which q k^T -> scale -> softmax -> p v chains become one
// _attention node, with what attributes, and that the graph computes the
// same values afterwards (the op's reference kernel against the four
// steps'). The CUDA kernel is checked by the registry op test and the
// transformer zoo test on cuda-host.
#include <gtest/gtest.h>

#include <tuple>

#include "graph_builders.h"
#include "pass_test_support.h"
#include "targets/target.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::expect_same_results;
using testing::make_node;
using testing::op_names;
using testing::prepared;

const int64_t kAttentionTokens = 6, kAttentionHeads = 2, kAttentionSize = 4;

const Target& cuda_target() { return find_target("cuda"); }

// The zoo transformer's attention, heads of `size`: softmax(q k^T * 0.5) v, heads merged back,
// after fuse_strided_batch_dot.
Graph transformer_attention(int64_t size = kAttentionSize) {
  Graph g = prepared(testing::attention_graph(kAttentionTokens, kAttentionHeads, size, 0.5));
  fuse_strided_batch_dot(g);
  infer_shapes(g);
  return g;
}

TEST(FuseAttention, TheTransformersAttentionBecomesOneNode) {
  Graph g = transformer_attention();
  ASSERT_EQ(op_names(g),
            (std::vector<std::string>{"_strided_batch_dot", "_mul_scalar", "softmax", "_strided_batch_dot"}));
  const Graph before = g;
  EXPECT_TRUE(fuse_attention(g, cuda_target()));
  ASSERT_EQ(op_names(g), (std::vector<std::string>{"_attention"}));
  const Node& fused = g.nodes[0];
  EXPECT_EQ(fused.name, "context");
  EXPECT_EQ(fused.inputs, (std::vector<std::string>{"q", "k", "v"}));
  EXPECT_EQ(fused.outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(fused.attrs.get_int("batch"), kAttentionHeads);
  EXPECT_EQ(fused.attrs.get_int("m"), kAttentionTokens);
  EXPECT_EQ(fused.attrs.get_int("n"), kAttentionTokens);
  EXPECT_EQ(fused.attrs.get_int("d"), kAttentionSize);
  EXPECT_EQ(fused.attrs.get_int("dv"), kAttentionSize);
  // Head h of each projection: rows heads * size apart, starting size * h in.
  const std::vector<int64_t> heads{kAttentionSize, kAttentionHeads * kAttentionSize, 1};
  EXPECT_EQ(fused.attrs.get_ints("q_strides"), heads);
  EXPECT_EQ(fused.attrs.get_ints("k_strides"), heads);
  EXPECT_EQ(fused.attrs.get_ints("v_strides"), heads);
  EXPECT_EQ(fused.attrs.get_ints("out_strides"), heads);
  EXPECT_EQ(fused.attrs.get_ints("out_shape"),
            (std::vector<int64_t>{1, kAttentionTokens, kAttentionHeads * kAttentionSize}));
  EXPECT_DOUBLE_EQ(fused.attrs.get_float("scale"), 0.5);
  for (const char* gone : {"scores", "scaled", "weights"}) EXPECT_EQ(g.types.count(gone), 0u) << gone;
  infer_shapes(g);
  expect_same_results(before, g);
  EXPECT_FALSE(fuse_attention(g, cuda_target()));
}

// batch_dot's transpose flags become strides; _div_scalar and the
// softmax's temperature both go into the scale.
TEST(FuseAttention, PlainBatchDotsWithADivisionAndATemperature) {
  Graph g;
  g.add_input("q", {{3, 5, 4}});
  g.add_input("kt", {{3, 4, 7}});  // keys as columns: q kt without a transpose flag
  g.add_input("v", {{3, 7, 6}});
  g.nodes.push_back(make_node("s", "batch_dot", {"q", "kt"}));
  g.nodes.push_back(make_node("sd", "_div_scalar", {"s"}, attrs_of({{"scalar", 4.0}})));
  g.nodes.push_back(make_node("p", "softmax", {"sd"}, attrs_of({{"axis", int64_t{2}}, {"temperature", 0.5}})));
  g.nodes.push_back(make_node("y", "batch_dot", {"p", "v"}));
  g.outputs = {"y"};
  g = prepared(g);
  const Graph before = g;
  EXPECT_TRUE(fuse_attention(g, cuda_target()));
  ASSERT_EQ(op_names(g), (std::vector<std::string>{"_attention"}));
  const Node& fused = g.nodes[0];
  EXPECT_EQ(fused.name, "y");
  EXPECT_EQ(fused.attrs.get_ints("q_strides"), (std::vector<int64_t>{20, 4, 1}));
  EXPECT_EQ(fused.attrs.get_ints("k_strides"), (std::vector<int64_t>{28, 1, 7}));
  EXPECT_EQ(fused.attrs.get_ints("v_strides"), (std::vector<int64_t>{42, 6, 1}));
  EXPECT_EQ(fused.attrs.get_ints("out_strides"), (std::vector<int64_t>{30, 6, 1}));
  EXPECT_DOUBLE_EQ(fused.attrs.get_float("scale"), 0.5);  // 1/4 divided by the temperature 0.5
  infer_shapes(g);
  expect_same_results(before, g);
}

// No scaling node: the softmax reads the scores directly.
TEST(FuseAttention, WithoutAScale) {
  Graph g;
  g.add_input("q", {{2, 3, 8}});
  g.add_input("k", {{2, 9, 8}});
  g.add_input("v", {{2, 9, 5}});
  g.nodes.push_back(make_node("s", "batch_dot", {"q", "k"}, attrs_of({{"transpose_b", true}})));
  g.nodes.push_back(make_node("p", "softmax", {"s"}));
  g.nodes.push_back(make_node("y", "batch_dot", {"p", "v"}));
  g.outputs = {"y"};
  g = prepared(g);
  const Graph before = g;
  EXPECT_TRUE(fuse_attention(g, cuda_target()));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"_attention"}));
  EXPECT_DOUBLE_EQ(g.nodes[0].attrs.get_float("scale"), 1.0);
  infer_shapes(g);
  expect_same_results(before, g);
}

// q k^T -> op(scores, c) -> softmax -> p v, c a constant of `c_shape` holding 4 (or a graph input).
Graph scaled_by(const std::string& op, const Shape& c_shape, bool constant = true, bool c_first = false) {
  Graph g;
  g.add_input("q", {{2, 6, 4}});
  g.add_input("k", {{2, 7, 4}});
  g.add_input("v", {{2, 7, 3}});
  if (constant)
    g.add_constant("c",
                   Constant::f32(c_shape, std::vector<float>(static_cast<std::size_t>(num_elements(c_shape)), 4.0f)));
  else
    g.add_input("c", {c_shape});
  g.nodes.push_back(make_node("s", "batch_dot", {"q", "k"}, attrs_of({{"transpose_b", true}})));
  g.nodes.push_back(
      make_node("sc", op, c_first ? std::vector<std::string>{"c", "s"} : std::vector<std::string>{"s", "c"}));
  g.nodes.push_back(make_node("p", "softmax", {"sc"}));
  g.nodes.push_back(make_node("y", "batch_dot", {"p", "v"}));
  g.outputs = {"y"};
  return prepared(g);
}

// ONNX's Div and Mul by a one-element constant: the constant goes with the nodes.
TEST(FuseAttention, ScoresScaledByAOneElementConstant) {
  for (const auto& [op, c_first, scale] : std::vector<std::tuple<std::string, bool, double>>{
           {"broadcast_div", false, 0.25}, {"broadcast_mul", false, 4.0}, {"broadcast_mul", true, 4.0}}) {
    SCOPED_TRACE(op + (c_first ? " (constant first)" : ""));
    Graph g = scaled_by(op, {1}, true, c_first);
    const Graph before = g;
    EXPECT_TRUE(fuse_attention(g, cuda_target()));
    ASSERT_EQ(op_names(g), (std::vector<std::string>{"_attention"}));
    EXPECT_DOUBLE_EQ(g.nodes[0].attrs.get_float("scale"), scale);
    EXPECT_EQ(g.constants.count("c"), 0u);
    infer_shapes(g);
    expect_same_results(before, g);
  }
}

void expect_attention_unchanged(Graph g, const Target& target, const std::string& why) {
  SCOPED_TRACE(why);
  const std::vector<std::string> ops = op_names(g);
  EXPECT_FALSE(fuse_attention(g, target));
  EXPECT_EQ(op_names(g), ops);
}

TEST(FuseAttention, IntermediatesReadElsewhereOrOutputsStay) {
  for (const char* value : {"scores", "scaled", "weights"}) {
    Graph output = transformer_attention();
    output.outputs.push_back(value);
    expect_attention_unchanged(output, cuda_target(), std::string(value) + " is a graph output");

    Graph read = transformer_attention();
    read.nodes.push_back(make_node("other", "negative", {value}));
    read.outputs.push_back("other");
    expect_attention_unchanged(prepared(read), cuda_target(), std::string(value) + " has another reader");
  }
}

TEST(FuseAttention, ScalesThatAreNoScalarConstantStay) {
  expect_attention_unchanged(scaled_by("broadcast_mul", {1}, false), cuda_target(), "a scale fed at run time");
  expect_attention_unchanged(scaled_by("broadcast_mul", {7}), cuda_target(), "a scale per key");
  expect_attention_unchanged(scaled_by("broadcast_div", {1}, true, true), cuda_target(),
                             "a constant divided by scores");
}

TEST(FuseAttention, SoftmaxOverAnotherAxisStays) {
  Graph g;
  g.add_input("q", {{2, 5, 4}});
  g.add_input("k", {{2, 5, 4}});
  g.add_input("v", {{2, 5, 3}});
  g.nodes.push_back(make_node("s", "batch_dot", {"q", "k"}, attrs_of({{"transpose_b", true}})));
  g.nodes.push_back(make_node("p", "softmax", {"s"}, attrs_of({{"axis", int64_t{1}}})));
  g.nodes.push_back(make_node("y", "batch_dot", {"p", "v"}));
  g.outputs = {"y"};
  expect_attention_unchanged(prepared(g), cuda_target(), "softmax over the queries");
}

// int8 products and an integer softmax (a quantized model on a target with int8 kernels) are not float.
TEST(FuseAttention, QuantizedAttentionStays) {
  Graph g;
  const Quantization q8 = Quantization::per_tensor(0.05f, 0);
  for (const char* x : {"q", "k", "v"}) g.add_input(x, TensorType{{2, 5, 4}, DType::kInt8, q8});
  auto quantized = [](Attrs a, double scale, int64_t zero_point) {
    a.set("out_scale", scale);
    a.set("out_zero_point", zero_point);
    return a;
  };
  g.nodes.push_back(make_node("s", "batch_dot", {"q", "k"}, quantized(attrs_of({{"transpose_b", true}}), 0.1, 0)));
  g.nodes.push_back(make_node("p", "softmax", {"s"}, quantized(Attrs{}, 1.0 / 256, -128)));
  g.nodes.push_back(make_node("y", "batch_dot", {"p", "v"}, quantized(Attrs{}, 0.05, 0)));
  g.outputs = {"y"};
  expect_attention_unchanged(prepared(g), cuda_target(), "int8");
}

TEST(FuseAttention, TargetsWithoutAKernelStay) {
  for (const char* target : {"generic", "x86-64-v3"})
    expect_attention_unchanged(transformer_attention(), find_target(target), target);
  Graph emulated = transformer_attention();
  EXPECT_TRUE(fuse_attention(emulated, find_target("cuda-host")));
}

TEST(FuseAttention, HeadsOverTheKernelsLargestStay) {
  expect_attention_unchanged(transformer_attention(256), cuda_target(), "heads of 256");
  Graph fits = transformer_attention(128);
  EXPECT_TRUE(fuse_attention(fits, cuda_target()));
  EXPECT_EQ(op_names(fits), (std::vector<std::string>{"_attention"}));
}

}  // namespace
}  // namespace hybgen
