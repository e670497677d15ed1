// The F methods of the reduction, selection, shape and indexing ops run
// eagerly (through the ops' reference kernels) with Gluon's defaults.
#include <gtest/gtest.h>

#include "runtime-lite/ops.h"

namespace hybgen {
namespace {

using V = std::vector<float>;

TEST(ShapeSelectF, EagerCallsUseGluonDefaults) {
  const Ops F;
  const Tensor x = Tensor::from_vector({2, 3}, {1, 9, 3, 4, 2, 8});
  EXPECT_EQ(F.max(x, {1}).to_vector(), (V{9, 8}));
  EXPECT_EQ(F.min(x).to_vector(), (V{1}));
  EXPECT_EQ(F.prod(x, {0}).to_vector(), (V{4, 18, 24}));
  EXPECT_FLOAT_EQ(F.norm(Tensor::from_vector({2}, {3, 4})).to_vector()[0], 5.0f);
  EXPECT_EQ(F.argmax(x, 1).to_vector(), (V{1, 2}));
  EXPECT_EQ(F.argmin(x).to_vector(), (V{0}));
  EXPECT_EQ(F.topk(x, -1, 2)[0].to_vector(), (V{1, 2, 2, 0}));
  const auto both = F.topk(x, -1, 1, "both");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].to_vector(), (V{9, 8}));
  EXPECT_EQ(F.pick(x, Tensor::from_vector({2}, {2, 0})).to_vector(), (V{3, 4}));
  EXPECT_EQ(F.tile(x, {1, 2}).shape(), (Shape{2, 6}));
  EXPECT_EQ(F.repeat(x, 2).shape(), (Shape{12}));
  EXPECT_EQ(F.stack({x, x}, 2).shape(), (Shape{2, 3, 2}));
  EXPECT_EQ(F.reverse(x, {1}).to_vector(), (V{3, 9, 1, 8, 2, 4}));
  EXPECT_EQ(F.Pad(F.expand_dims(F.expand_dims(x, 0), 0), {0, 0, 0, 0, 0, 0, 1, 0}, "edge").to_vector(),
            (V{1, 1, 9, 3, 4, 4, 2, 8}));
  EXPECT_EQ(F.Cast(F.Cast(Tensor::from_vector({1}, {0.1f}), "float16"), "float32").to_vector(), (V{0.0999755859375f}));
  EXPECT_EQ(F.take(x, Tensor::from_vector({1}, {1})).to_vector(), (V{4, 2, 8}));
  EXPECT_EQ(F.one_hot(Tensor::from_vector({2}, {0, 2}), 3).to_vector(), (V{1, 0, 0, 0, 0, 1}));
  EXPECT_EQ(F.slice_like(x, Tensor({1, 2})).to_vector(), (V{1, 9}));
  const Tensor img = Tensor::random_uniform({1, 4, 2, 2}, -1, 1, 7);
  EXPECT_EQ(F.space_to_depth(F.depth_to_space(img, 2), 2).to_vector(), img.to_vector());
  EXPECT_EQ(F.SequenceMask(x, Tensor::from_vector({3}, {1, 2, 0}), -1.0, 0).to_vector(), (V{1, 9, -1, -1, 2, -1}));
}

}  // namespace
}  // namespace hybgen
