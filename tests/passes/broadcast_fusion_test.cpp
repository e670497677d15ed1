// Fusion of the ops that broadcast or select (broadcast_to/axis/like, where,
// ones_like, add_n, the comparisons): an op whose output is larger than its
// input starts a loop over that output that the elementwise ops after it
// join, an ignored operand (broadcast_like's rhs) is read as one element,
// identities (BlockGrad, make_loss) disappear, and no buffer shares bytes
// with an input read through broadcast strides.
#include <gtest/gtest.h>

#include <algorithm>

#include "graph_builders.h"
#include "passes/passes.h"
#include "pipeline.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;

TEST(BroadcastFusion, BroadcastThenArithmeticIsOneLoop) {
  // y = where(broadcast_to(c) > 0.5, x + 1, zeros_like(x)) + add_n(x, x), BlockGrad on top.
  Graph g;
  g.add_input("x", {{4, 6}});
  g.add_input("c", {{4, 1}});
  g.nodes.push_back(make_node("wide", "broadcast_to", {"c"}, attrs_of({{"shape", std::vector<int64_t>{0, 6}}})));
  g.nodes.push_back(make_node("mask", "_greater_scalar", {"wide"}, attrs_of({{"scalar", 0.5}})));
  g.nodes.push_back(make_node("inc", "_plus_scalar", {"x"}, attrs_of({{"scalar", 1.0}})));
  g.nodes.push_back(make_node("zero", "zeros_like", {"x"}, {}));
  g.nodes.push_back(make_node("pick", "where", {"mask", "inc", "zero"}, {}));
  g.nodes.push_back(make_node("twice", "add_n", {"x", "x"}, {}));
  g.nodes.push_back(make_node("sum", "elemwise_add", {"pick", "twice"}, {}));
  g.nodes.push_back(make_node("out", "BlockGrad", {"sum"}, {}));
  g.outputs = {"out"};
  const CompiledGraph c = compile_graph(g);
  for (const Node& n : c.graph.nodes) EXPECT_NE(n.op, "BlockGrad");
  // The loop starts at broadcast_to; inc, zero and twice start their own
  // (they read nothing of it) and join where/sum where those read them.
  std::size_t largest = 0;
  for (const Kernel& k : c.kernels) {
    EXPECT_EQ(k.kind, KernelKind::kElementwise);
    largest = std::max(largest, k.nodes.size());
  }
  EXPECT_LE(c.kernels.size(), 4u);
  EXPECT_GE(largest, 3u);
  EXPECT_NO_THROW(c.plan.verify());
}

TEST(BroadcastFusion, ARowConditionAndAnIgnoredShapeSourceAreNotStreamed) {
  Graph g;
  g.add_input("x", {{3, 5}});
  g.add_input("rows", {{3}});
  g.add_input("tall", {{3, 1}});
  g.nodes.push_back(make_node("neg", "negative", {"x"}, {}));
  g.nodes.push_back(make_node("pick", "where", {"rows", "x", "neg"}, {}));
  g.nodes.push_back(make_node("grown", "broadcast_like", {"tall", "pick"}, {}));
  g.nodes.push_back(make_node("out", "broadcast_mul", {"grown", "pick"}, {}));
  g.outputs = {"out"};
  const CompiledGraph c = compile_graph(g);
  // negative + where in one loop (rows read as (3, 1)); broadcast_like reads
  // pick from that loop as a shape source only, so it starts another.
  ASSERT_EQ(c.kernels.size(), 2u);
  EXPECT_EQ(c.kernels[0].nodes.size(), 2u);
  EXPECT_EQ(c.kernels[1].nodes.size(), 2u);
  EXPECT_EQ(scalar_operand_shape(c.graph, c.graph.nodes[c.kernels[0].nodes[1]], 0), (Shape{3, 1}));
  EXPECT_EQ(scalar_operand_shape(c.graph, c.graph.nodes[c.kernels[1].nodes[0]], 1), (Shape{1, 1}));
  EXPECT_NO_THROW(c.plan.verify());
}

}  // namespace
}  // namespace hybgen
