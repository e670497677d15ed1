// fuse_strided_batch_dot: which reshape/transpose chains around a batch_dot
// fold into one _strided_batch_dot, with what strides, and that the graph
// computes the same values afterwards (the op's reference kernel against the
// views and batch_dot). The generated kernel is checked by the registry op
// test and the transformer zoo test.
#include <gtest/gtest.h>

#include "graph_builders.h"
#include "pass_test_support.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::expect_same_results;
using testing::make_node;
using testing::op_names;
using testing::prepared;

const int64_t kTokens = 6, kHeads = 2, kSize = 4;

// q, k, v (1, tokens, heads * size) -> softmax(q k^T) v with heads merged
// back: (1, tokens, heads * size).
Graph attention() { return prepared(testing::attention_graph(kTokens, kHeads, kSize)); }

TEST(FuseStridedBatchDot, AttentionHeadsAreReadAndWrittenInPlace) {
  Graph g = attention();
  const Graph before = g;
  EXPECT_TRUE(fuse_strided_batch_dot(g));
  EXPECT_EQ(op_names(g), (std::vector<std::string>{"_strided_batch_dot", "softmax", "_strided_batch_dot"}));
  const Node& scores = g.nodes[0];
  EXPECT_EQ(scores.name, "scores");
  EXPECT_EQ(scores.inputs, (std::vector<std::string>{"q", "k"}));
  EXPECT_EQ(scores.outputs, (std::vector<std::string>{"scores"}));
  // Head h of q: rows kHeads * kSize apart, starting kSize * h in; k^T reads k's rows as columns.
  EXPECT_EQ(scores.attrs.get_ints("lhs_strides"), (std::vector<int64_t>{kSize, kHeads * kSize, 1}));
  EXPECT_EQ(scores.attrs.get_ints("rhs_strides"), (std::vector<int64_t>{kSize, 1, kHeads * kSize}));
  EXPECT_EQ(scores.attrs.get_ints("out_strides"), (std::vector<int64_t>{kTokens * kTokens, kTokens, 1}));
  const Node& context = g.nodes[2];
  EXPECT_EQ(context.inputs, (std::vector<std::string>{"weights", "v"}));
  EXPECT_EQ(context.outputs, (std::vector<std::string>{"y"}));
  EXPECT_EQ(context.attrs.get_ints("rhs_strides"), (std::vector<int64_t>{kSize, kHeads * kSize, 1}));
  EXPECT_EQ(context.attrs.get_ints("out_strides"), (std::vector<int64_t>{kSize, kHeads * kSize, 1}));
  EXPECT_EQ(context.attrs.get_ints("out_shape"), (std::vector<int64_t>{1, kTokens, kHeads * kSize}));
  for (const char* gone : {"q_r0", "q_t", "q_r1", "context", "c_r0", "c_t"}) EXPECT_EQ(g.types.count(gone), 0u) << gone;
  infer_shapes(g);
  expect_same_results(before, g);
  EXPECT_FALSE(fuse_strided_batch_dot(g));
}

TEST(FuseStridedBatchDot, AValueReadElsewhereStaysAndTheRestFolds) {
  Graph g = attention();
  g.outputs.push_back("k_t");  // the transposed k is wanted too
  const Graph before = g;
  EXPECT_TRUE(fuse_strided_batch_dot(g));
  const Node& scores = *std::find_if(g.nodes.begin(), g.nodes.end(), [](const Node& n) { return n.name == "scores"; });
  EXPECT_EQ(scores.op, "_strided_batch_dot");
  // The chain from k stops below the transpose: k_r1 alone is a view of
  // k_t, which is contiguous, so only q folds.
  EXPECT_EQ(scores.inputs, (std::vector<std::string>{"q", "k_r1"}));
  EXPECT_GE(g.producer("k_t"), 0);
  infer_shapes(g);
  expect_same_results(before, g);
}

TEST(FuseStridedBatchDot, ChainsWithoutATransposeOrWithoutAUnitStrideStay) {
  // Reshapes alone: the operand is contiguous already.
  Graph reshaped;
  reshaped.add_input("a", {{2, 12}});
  reshaped.add_input("b", {{2, 3, 5}});
  reshaped.nodes.push_back(make_node("a3", "Reshape", {"a"}, attrs_of({{"shape", std::vector<int64_t>{2, 4, 3}}})));
  reshaped.nodes.push_back(make_node("p", "batch_dot", {"a3", "b"}));
  reshaped.outputs = {"p"};
  reshaped = prepared(reshaped);
  EXPECT_FALSE(fuse_strided_batch_dot(reshaped));

  // Reversing (3, 5, 4) to (4, 5, 3): neither rows nor columns of a matrix are contiguous.
  Graph reversed;
  reversed.add_input("a", {{3, 5, 4}});
  reversed.add_input("b", {{4, 3, 2}});
  reversed.nodes.push_back(make_node("at", "transpose", {"a"}));
  reversed.nodes.push_back(make_node("p", "batch_dot", {"at", "b"}));
  reversed.outputs = {"p"};
  reversed = prepared(reversed);
  EXPECT_FALSE(fuse_strided_batch_dot(reversed));

  // A result transposed so that its rows become columns: no unit column stride.
  Graph swapped;
  swapped.add_input("a", {{2, 4, 3}});
  swapped.add_input("b", {{2, 3, 5}});
  swapped.nodes.push_back(make_node("p", "batch_dot", {"a", "b"}));
  swapped.nodes.push_back(make_node("y", "transpose", {"p"}, attrs_of({{"axes", std::vector<int64_t>{0, 2, 1}}})));
  swapped.outputs = {"y"};
  swapped = prepared(swapped);
  EXPECT_FALSE(fuse_strided_batch_dot(swapped));
}

TEST(FuseStridedBatchDot, TransposedFlagsComposeWithTheViews) {
  // batch_dot(x^T, y^T) where x and y are themselves transposed views: the
  // flags and the transposes cancel into plain row-major reads.
  Graph g;
  g.add_input("x", {{2, 5, 3}});
  g.add_input("y", {{2, 3, 4}});
  g.nodes.push_back(make_node("xt", "transpose", {"x"}, attrs_of({{"axes", std::vector<int64_t>{0, 2, 1}}})));
  g.nodes.push_back(make_node("yt", "transpose", {"y"}, attrs_of({{"axes", std::vector<int64_t>{0, 2, 1}}})));
  g.nodes.push_back(
      make_node("p", "batch_dot", {"xt", "yt"}, attrs_of({{"transpose_a", true}, {"transpose_b", true}})));
  g.outputs = {"p"};
  g = prepared(g);
  const Graph before = g;
  EXPECT_TRUE(fuse_strided_batch_dot(g));
  ASSERT_EQ(op_names(g), (std::vector<std::string>{"_strided_batch_dot"}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("lhs_strides"), (std::vector<int64_t>{15, 3, 1}));
  EXPECT_EQ(g.nodes[0].attrs.get_ints("rhs_strides"), (std::vector<int64_t>{12, 4, 1}));
  infer_shapes(g);
  expect_same_results(before, g);
}

}  // namespace
}  // namespace hybgen
