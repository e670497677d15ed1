// The F methods of the elementwise, comparison and broadcast ops: eagerly on
// values whose answers are known by hand, and traced symbolically into the
// ops MXNet names, whose graph the interpreter runs to the same values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "runtime-lite/hybgen.h"

namespace hybgen {
namespace {

using V = std::vector<float>;

TEST(ElementwiseOps, EagerValuesAreMxnets) {
  const Ops F;
  const Tensor x = Tensor::from_vector({2, 3}, {-2.5f, -0.5f, 0.0f, 0.5f, 1.5f, 2.5f});
  EXPECT_EQ(F.round(x).to_vector(), (V{-3, -1, 0, 1, 2, 3}));  // half away from zero
  EXPECT_EQ(F.rint(x).to_vector(), (V{-3, -1, 0, 0, 1, 2}));   // MXNet's: ties to floor
  EXPECT_EQ(F.fix(x).to_vector(), (V{-2, 0, 0, 0, 1, 2}));
  EXPECT_EQ(F.floor(x).to_vector(), (V{-3, -1, 0, 0, 1, 2}));
  EXPECT_EQ(F.ceil(x).to_vector(), (V{-2, 0, 0, 1, 2, 3}));
  EXPECT_EQ(F.sign(x).to_vector(), (V{-1, -1, 0, 1, 1, 1}));
  EXPECT_EQ(F.logical_not(x).to_vector(), (V{0, 0, 1, 0, 0, 0}));
  EXPECT_EQ(F.greater(x, 0.5f).to_vector(), (V{0, 0, 0, 0, 1, 1}));
  EXPECT_EQ(F.lesser_equal(x, 0.5f).to_vector(), (V{1, 1, 1, 1, 0, 0}));
  EXPECT_EQ(F.power(x, 2.0f).to_vector(), (V{6.25f, 0.25f, 0, 0.25f, 2.25f, 6.25f}));
  EXPECT_EQ(F.power(2.0f, x).at({1, 0}), std::sqrt(2.0f));
  const Tensor row = Tensor::from_vector({3}, {0.0f, 0.5f, 3.0f});
  EXPECT_EQ(F.equal(x, row).to_vector(), (V{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(F.greater_equal(x, row).to_vector(), (V{0, 0, 0, 1, 1, 0}));
  EXPECT_EQ(F.logical_xor(x, row).to_vector(), (V{1, 0, 1, 1, 0, 0}));
  EXPECT_EQ(F.where(F.greater(x, 0.0f), x, F.negative(x)).to_vector(), (V{2.5f, 0.5f, 0, 0.5f, 1.5f, 2.5f}));
  // One condition per row.
  EXPECT_EQ(F.where(Tensor::from_vector({2}, {0, 1}), x, F.zeros_like(x)).to_vector(), (V{0, 0, 0, 0.5f, 1.5f, 2.5f}));
  EXPECT_EQ(F.add_n({x, x, F.ones_like(x)}).to_vector(), (V{-4, 0, 1, 2, 4, 6}));
  const Tensor col = Tensor::from_vector({2, 1}, {1, 2});
  EXPECT_EQ(F.broadcast_to(col, {0, 3}).to_vector(), (V{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(F.broadcast_axis(col, {1}, {3}).to_vector(), (V{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(F.broadcast_like(col, x).shape(), (Shape{2, 3}));
  EXPECT_EQ(F.broadcast_like(Tensor::from_vector({1, 1}, {7}), x, {0}, {1}).shape(), (Shape{3, 1}));
  EXPECT_EQ(F.BlockGrad(x).to_vector(), x.to_vector());
}

TEST(ElementwiseOps, TracedGraphNamesMxnetOpsAndRunsToTheEagerValues) {
  auto forward = [](const Ops& F, const Tensor& x, const Tensor& y) {
    const Tensor chosen = F.where(F.greater(x, y), F.power(F.abs(x), 1.5f), F.sin(F.broadcast_like(y, x)));
    return F.add_n({F.stop_gradient(chosen), F.round(F.broadcast_to(y, {2, 0})), F.trunc(x)});
  };
  const Tensor x = Tensor::random_normal({2, 3}, 0.0f, 2.0f, 5);
  const Tensor y = Tensor::random_normal({1, 3}, 0.0f, 2.0f, 6);
  const Tensor eager = forward(Ops(false), x, y);
  const Tensor s = forward(Ops(true), sym::var("x", Shape{2, 3}), sym::var("y", Shape{1, 3}));
  const Graph g = sym::to_graph({s}, "traced");
  std::vector<std::string> ops;
  for (const auto& n : g.nodes) ops.push_back(n.op);
  for (const char* op : {"broadcast_greater", "_power_scalar", "where", "BlockGrad", "broadcast_to", "broadcast_like", "round", "add_n"})
    EXPECT_NE(std::find(ops.begin(), ops.end(), op), ops.end()) << op;
  Interpreter interpreter(g);
  const auto out = interpreter.run({{"x", x}, {"y", y}});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].to_vector(), eager.to_vector());
}

}  // namespace
}  // namespace hybgen
