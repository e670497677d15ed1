// Transposed convolutions (nn::Conv2DTranspose, nn::Conv1DTranspose) and the
// upsampling ops (F.UpSampling, F.BilinearResize2D): values by hand, deferred
// in_channels, and a small decoder that gives the same outputs eagerly and
// hybridized.
#include <gtest/gtest.h>

#include <cmath>

#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"
#include "zoo.h"

namespace hybgen {
namespace {

TEST(ConvTranspose, OneDimensionalByHand) {
  // Each input value lays a copy of the kernel down, `stride` apart; overlaps add.
  auto up = std::make_shared<nn::Conv1DTranspose>(1, Shape{3}, Shape{2}, Shape{0}, Shape{0}, Shape{1}, 1, false);
  up->initialize(init::Zero(), 1);
  EXPECT_EQ(up->weight().shape(), (Shape{0, 1, 3}));  // in_channels deferred
  const Tensor x = Tensor::from_vector({1, 1, 2}, {1, 2});
  (*up)(x);
  up->weight().set_data(Tensor::from_vector({1, 1, 3}, {1, 10, 100}));
  const Tensor y = (*up)(x);
  ASSERT_EQ(y.shape(), (Shape{1, 1, 5}));
  const float want[] = {1, 10, 102, 20, 200};
  for (int i = 0; i < 5; ++i) EXPECT_FLOAT_EQ(y.data()[i], want[i]) << i;
}

TEST(ConvTranspose, TwoDimensionalShapesAndBias) {
  // Kernel 4, stride 2, padding 1 doubles the size; output_padding adds a pixel.
  auto up = std::make_shared<nn::Conv2DTranspose>(5, Shape{4, 4}, Shape{2, 2}, Shape{1, 1}, Shape{1, 0});
  up->initialize(init::Xavier(), 3);
  const Tensor zeros = Tensor::full({2, 3, 6, 7}, 0.0f);
  (*up)(zeros);  // resolves the weight's shape
  int biases = 0;
  for (Parameter* p : up->collect_params())
    if (p->name().size() >= 4 && p->name().compare(p->name().size() - 4, 4, "bias") == 0) {
      p->set_data(Tensor::full({5}, 0.5f));
      ++biases;
    }
  EXPECT_EQ(biases, 1);
  const Tensor y = (*up)(zeros);
  EXPECT_EQ(y.shape(), (Shape{2, 5, 13, 14}));
  EXPECT_EQ(up->weight().shape(), (Shape{3, 5, 4, 4}));
  for (int64_t i = 0; i < y.size(); ++i) ASSERT_FLOAT_EQ(y.data()[i], 0.5f);
}

TEST(Upsampling, NearestAndResizeByHand) {
  const Ops F;
  const Tensor x = Tensor::from_vector({1, 1, 2, 2}, {1, 2, 3, 4});
  const Tensor n = F.UpSampling(x, 2);
  ASSERT_EQ(n.shape(), (Shape{1, 1, 4, 4}));
  const float nearest[] = {1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4};
  for (int i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(n.data()[i], nearest[i]) << i;
  // align_corners: the corners stay, the middle of 1..2 is 1.5.
  const Tensor r = F.BilinearResize2D(x, 3, 3);
  ASSERT_EQ(r.shape(), (Shape{1, 1, 3, 3}));
  const float resized[] = {1, 1.5f, 2, 2, 2.5f, 3, 3, 3.5f, 4};
  for (int i = 0; i < 9; ++i) EXPECT_FLOAT_EQ(r.data()[i], resized[i]) << i;
}

// A U-Net-like decoder step: conv, transposed conv up, a skip concatenated,
// nearest and bilinear upsampling.
class Decoder : public HybridBlock {
 public:
  Decoder() : HybridBlock("decoder") {
    down = register_child(std::make_shared<nn::Conv2D>(8, Shape{3, 3}, Shape{2, 2}, Shape{1, 1}));
    up = register_child(std::make_shared<nn::Conv2DTranspose>(4, Shape{2, 2}, Shape{2, 2}));
    up4 = register_child(std::make_shared<nn::Conv2DTranspose>(3, Shape{4, 4}, Shape{2, 2}, Shape{1, 1}, Shape{0, 0},
                                                               Shape{1, 1}, 1, true, "relu"));
    line = register_child(std::make_shared<nn::Conv1DTranspose>(2, Shape{3}, Shape{2}, Shape{1}, Shape{1}));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor d = F.relu((*down)(x));
    const Tensor u = F.Concat({(*up)(d), x}, 1);
    const Tensor a = (*up4)(u);
    const Tensor b = F.UpSampling({d, F.UpSampling(d, 1)}, 4, "nearest", 0, "sum");
    const Tensor c = F.broadcast_add(F.BilinearResize2D(d, 1, 1, 0, 0, "like", false, b), b);
    const Tensor e = F.broadcast_add(F.slice_axis(c, 1, 0, 3), a);
    return (*line)(F.reshape(e, {0, 0, -1}));
  }
  std::shared_ptr<nn::Conv2D> down;
  std::shared_ptr<nn::Conv2DTranspose> up, up4;
  std::shared_ptr<nn::Conv1DTranspose> line;
};

TEST(ConvTranspose, EagerAndHybridizedAgree) {
  auto net = std::make_shared<Decoder>();
  net->initialize(init::Xavier(), 7);
  const Tensor x = Tensor::random_normal({1, 4, 6, 6}, 0.0f, 1.0f, 11);
  const Tensor eager = (*net)(x);
  EXPECT_EQ(eager.shape(), (Shape{1, 2, 2 * 12 * 12}));
  net->hybridize();
  const Tensor hybrid = (*net)(x);
  EXPECT_LE(max_abs_diff(eager, hybrid), 1e-4f);
  ASSERT_NE(net->first_call_cost(), nullptr);
  if (HybridizeOptions::compile_by_default()) {  // the first call ran on the interpreter; now the library
    EXPECT_TRUE(net->compiled(true)) << net->first_call_cost()->why_not_compiled;
    EXPECT_LE(max_abs_diff(eager, (*net)(x)), 1e-4f);
    EXPECT_TRUE(net->first_call_cost()->compiled);
  }
}

TEST(ConvTranspose, ZooUNetKeepsTheImageSize) {
  auto net = zoo::unet();
  net->initialize(init::Xavier(), 42);
  const Tensor y = (*net)(Tensor::random_normal({1, 3, 64, 64}, 0.0f, 1.0f, 7));
  EXPECT_EQ(y.shape(), (Shape{1, 2, 64, 64}));
}

}  // namespace
}  // namespace hybgen
