// The 1-D / 3-D convolution and pooling layers and the normalisation
// layers and ops: eager against hybridized (the optimized graph on the
// interpreter), values by hand for L2Normalization, LRN, InstanceNorm and
// GroupNorm, and the errors bad attributes get.
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"

namespace hybgen {
namespace {

class Net1D : public HybridBlock {
 public:
  Net1D() : HybridBlock("net1d") {
    conv = register_child(std::make_shared<nn::Conv1D>(6, Shape{3}, Shape{1}, Shape{1}, Shape{1}, 1, true, "relu"));
    norm = register_child(std::make_shared<nn::InstanceNorm>());
    pool = register_child(std::make_shared<nn::MaxPool1D>(Shape{2}));
    conv2 = register_child(std::make_shared<nn::Conv1D>(4, Shape{3}, Shape{2}, Shape{2}, Shape{2}, 2));
    gap = register_child(std::make_shared<nn::GlobalAvgPool1D>());
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor y = (*conv2)((*pool)((*norm)((*conv)(x))));
    return F.L2Normalization((*gap)(y), "instance");
  }
  std::shared_ptr<nn::Conv1D> conv, conv2;
  std::shared_ptr<nn::InstanceNorm> norm;
  std::shared_ptr<nn::MaxPool1D> pool;
  std::shared_ptr<nn::GlobalAvgPool1D> gap;
};

class Net3D : public HybridBlock {
 public:
  Net3D() : HybridBlock("net3d") {
    conv = register_child(std::make_shared<nn::Conv3D>(8, Shape{3, 3, 3}, Shape{1, 1, 1}, Shape{1, 1, 1}));
    norm = register_child(std::make_shared<nn::GroupNorm>(4));
    pool = register_child(std::make_shared<nn::AvgPool3D>(Shape{2, 2, 2}, Shape{}, Shape{0, 0, 0}, true));
    conv2 = register_child(std::make_shared<nn::Conv3D>(4, Shape{1, 3, 3}, Shape{1, 1, 1}, Shape{0, 1, 1},
                                                        Shape{1, 1, 1}, 2, false, "relu"));
    mp = register_child(std::make_shared<nn::MaxPool3D>(Shape{1, 2, 2}));
    gmp = register_child(std::make_shared<nn::GlobalMaxPool3D>());
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    const Tensor y = (*mp)((*conv2)((*pool)(F.relu((*norm)((*conv)(x))))));
    return (*gmp)(y);
  }
  std::shared_ptr<nn::Conv3D> conv, conv2;
  std::shared_ptr<nn::GroupNorm> norm;
  std::shared_ptr<nn::AvgPool3D> pool;
  std::shared_ptr<nn::MaxPool3D> mp;
  std::shared_ptr<nn::GlobalMaxPool3D> gmp;
};

HybridizeOptions interpreted() {
  HybridizeOptions o;
  o.compile = false;
  return o;
}

TEST(NdLayers, Conv1DNetworkHybridizedMatchesEager) {
  auto net = std::make_shared<Net1D>();
  net->initialize(init::Xavier(), 7);
  const Tensor x = Tensor::random_normal({2, 3, 17}, 0.0f, 1.0f, 1);
  const Tensor eager = (*net)(x);
  EXPECT_EQ(eager.shape(), (Shape{2, 4, 1}));
  EXPECT_EQ(net->conv->weight().shape(), (Shape{6, 3, 3}));
  EXPECT_EQ(net->conv2->weight().shape(), (Shape{4, 3, 3}));
  net->hybridize(true, interpreted());
  EXPECT_LE(max_abs_diff((*net)(x), eager), 1e-5f);
}

TEST(NdLayers, Conv3DNetworkHybridizedMatchesEager) {
  auto net = std::make_shared<Net3D>();
  net->initialize(init::Xavier(), 8);
  const Tensor x = Tensor::random_normal({1, 2, 5, 6, 7}, 0.0f, 1.0f, 2);
  const Tensor eager = (*net)(x);
  EXPECT_EQ(eager.shape(), (Shape{1, 4, 1, 1, 1}));
  EXPECT_EQ(net->conv->weight().shape(), (Shape{8, 2, 3, 3, 3}));
  EXPECT_EQ(net->norm->gamma().shape(), (Shape{4}));
  net->hybridize(true, interpreted());
  EXPECT_LE(max_abs_diff((*net)(x), eager), 1e-5f);
}

TEST(NdLayers, NormalisationOpsByHand) {
  const Ops F;
  // (1, 2, 2): per-sample norm over all 4 values, per position over channels, per channel.
  const Tensor x = Tensor::from_vector({1, 2, 2}, {3, 4, 0, 0});
  EXPECT_NEAR(F.L2Normalization(x, "instance", 0).at({0, 0, 1}), 0.8f, 1e-6);
  EXPECT_NEAR(F.L2Normalization(x, "channel", 0).at({0, 0, 0}), 1.0f, 1e-6);
  EXPECT_NEAR(F.L2Normalization(x, "spatial", 0).at({0, 0, 0}), 0.6f, 1e-6);
  // LRN: y = x * (k + alpha/n * sum of squares over the window)^-beta.
  const Tensor c = Tensor::from_vector({1, 3, 1, 1}, {1, 2, 3});
  const float y1 = F.LRN(c, 3, 0.3, 0.5, 1.0).at({0, 1, 0, 0});
  EXPECT_NEAR(y1, 2.0f / std::sqrt(1.0f + 0.1f * 14.0f), 1e-6);
  const float y0 = F.LRN(c, 3, 0.3, 0.5, 1.0).at({0, 0, 0, 0});
  EXPECT_NEAR(y0, 1.0f / std::sqrt(1.0f + 0.1f * 5.0f), 1e-6);
  // InstanceNorm over (1, 2) values with gamma 2, beta 1: (+-1) * 2 + 1.
  const Tensor v = Tensor::from_vector({1, 1, 2}, {1, 3});
  const Tensor in = F.InstanceNorm(v, Tensor::full({1}, 2.0f), Tensor::full({1}, 1.0f), 0.0);
  EXPECT_NEAR(in.at({0, 0, 0}), -1.0f, 1e-6);
  EXPECT_NEAR(in.at({0, 0, 1}), 3.0f, 1e-6);
  // GroupNorm with one group over 2 channels of 1 value: gamma per group.
  const Tensor gn = F.GroupNorm(Tensor::from_vector({1, 2, 1}, {0, 2}), Tensor::full({1}, 1.0f),
                                Tensor::full({1}, 0.0f), 1, 0.0);
  EXPECT_NEAR(gn.at({0, 1, 0}), 1.0f, 1e-6);
}

TEST(NdLayers, BadAttributesAreRefused) {
  const Ops F;
  const Tensor x = Tensor::full({1, 4, 3, 3}, 1.0f);
  EXPECT_ERROR(F.GroupNorm(x, Tensor::full({3}, 1.0f), Tensor::full({3}, 0.0f), 3), "must be positive and divide");
  EXPECT_ERROR(F.GroupNorm(x, Tensor::full({4}, 1.0f), Tensor::full({4}, 0.0f), 2), "gamma has shape");
  EXPECT_ERROR(F.LRN(x, 4), "positive odd");
  EXPECT_ERROR(F.L2Normalization(Tensor::full({2, 3}, 1.0f), "channel"), "at least 3 dims");
  EXPECT_ERROR(F.Pooling(Tensor::full({1, 2, 5}, 1.0f), {2, 2}), "4 dims");
  EXPECT_ERROR(F.Convolution(Tensor::full({1, 2, 5, 5, 5}, 1.0f), Tensor::full({3, 2, 3, 3}, 1.0f), Tensor(), {3, 3}, 3,
                             {}, {}, {}, 1, true),
               "4 dims");
  EXPECT_ERROR(F.Convolution(Tensor::full({1, 2, 5}, 1.0f), Tensor::full({3, 2, 3}, 1.0f), Tensor(), {3}, 3, {1, 1},
                             {}, {}, 1, true),
               "stride must have 1 values");
  EXPECT_ERROR(std::make_shared<nn::Conv3D>(4, Shape{3, 3}), "must have 3 values");
  // Hostile sizes: refused before any arithmetic on them.
  EXPECT_ERROR(F.Convolution(Tensor::full({1, 1, 4}, 1.0f), Tensor::full({1, 1, 3}, 1.0f), Tensor(),
                             {int64_t{1} << 40}, 1, {}, {}, {}, 1, true),
               "at most");
  EXPECT_ERROR(F.Pooling(Tensor::full({1, 1, 2, 2, 2, 2}, 1.0f), {1, 1, 1, 1}), "only 1-D, 2-D and 3-D");
  EXPECT_ERROR(F.Pooling(Tensor::full({1, 1, 4, 4, 4}, 1.0f), {2, 2, 2}, "max", {1, 1, 1}, {int64_t{1} << 40, 0, 0}),
               "at most");
  EXPECT_ERROR(F.Pooling(Tensor::full({1, 4}, 1.0f), {}, "avg", {}, {}, true), "3 to 5 dims");
}

}  // namespace
}  // namespace hybgen
