// Layers and blocks run eagerly: Dense and activations against hand
// computation, deferred in_units, initializers, Gluon-style names, errors.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>

#include "error_matchers.h"
#include "runtime-lite/hybgen.h"

namespace hybgen {
namespace {

TEST(Activations, EveryKindByHand) {
  const Ops F;
  const Tensor x = Tensor::from_vector({4}, {-2, -0.5f, 0, 1.5f});
  const std::vector<float> v = x.to_vector();
  const auto check = [&](const Tensor& y, float (*expected)(float)) {
    ASSERT_EQ(y.shape(), x.shape());
    for (std::size_t i = 0; i < v.size(); ++i) EXPECT_NEAR(y.to_vector()[i], expected(v[i]), 1e-6) << i;
  };
  check(F.relu(x), [](float a) { return a > 0 ? a : 0.0f; });
  check(F.sigmoid(x), [](float a) { return 1.0f / (1.0f + std::exp(-a)); });
  check(F.tanh(x), [](float a) { return std::tanh(a); });
  check(F.softrelu(x), [](float a) { return std::log(1.0f + std::exp(a)); });
  check(F.softsign(x), [](float a) { return a / (1.0f + std::fabs(a)); });
  check((*std::make_shared<nn::Activation>("tanh"))(x), [](float a) { return std::tanh(a); });
  EXPECT_ERROR(F.Activation(x, "swish"), "expected one of: relu, sigmoid");
}

TEST(Activations, ShapeAndElementwiseOps) {
  const Ops F;
  const Tensor x = Tensor::from_vector({2, 3}, {1, 2, 3, 1, 1, 1});
  const Tensor sm = F.softmax(x);
  const float e = std::exp(1.0f) + std::exp(2.0f) + std::exp(3.0f);
  EXPECT_NEAR(sm.at({0, 2}), std::exp(3.0f) / e, 1e-6);
  EXPECT_NEAR(sm.at({1, 0}), 1.0f / 3.0f, 1e-6);
  EXPECT_NEAR(F.log_softmax(x).at({0, 0}), 1.0f - std::log(e), 1e-5);
  EXPECT_EQ(F.reshape(x, {3, 2}).shape(), (Shape{3, 2}));
  EXPECT_EQ(F.flatten(Tensor({2, 3, 4})).shape(), (Shape{2, 12}));
  EXPECT_EQ(F.Dropout(x, 0.5).to_vector(), x.to_vector());  // inference: identity
  EXPECT_EQ(F.identity(x).to_vector(), x.to_vector());
  const Tensor y = Tensor::from_vector({3}, {2, 0, 5});
  EXPECT_EQ(F.broadcast_maximum(x, y).to_vector(), (std::vector<float>{2, 2, 5, 2, 1, 5}));
  EXPECT_EQ(F.broadcast_minimum(x, y).to_vector(), (std::vector<float>{1, 0, 3, 1, 0, 1}));
}

TEST(Dense, ComputesByHandWithAndWithoutBias) {
  auto fc = std::make_shared<nn::Dense>(2, "", true, 3);
  fc->initialize(init::Zero());
  EXPECT_TRUE(fc->weight().shape_known());
  fc->weight().set_data(Tensor::from_vector({2, 3}, {1, 2, 3, -1, 0, 1}));
  fc->bias().set_data(Tensor::from_vector({2}, {0.5f, -0.5f}));
  const Tensor x = Tensor::from_vector({2, 3}, {1, 1, 1, 2, 0, -1});
  // y = x W^T + b
  EXPECT_EQ((*fc)(x).to_vector(), (std::vector<float>{6.5f, -0.5f, -0.5f, -3.5f}));

  auto nobias = std::make_shared<nn::Dense>(1, "sigmoid", /*use_bias=*/false, 2);
  nobias->initialize(init::One());
  const Tensor y = (*nobias)(Tensor::from_vector({1, 2}, {0.25f, 0.5f}));
  EXPECT_NEAR(y.at({0, 0}), 1.0f / (1.0f + std::exp(-0.75f)), 1e-6);
  EXPECT_EQ(nobias->collect_params().size(), 1u);
}

TEST(Dense, DeferredInUnitsComeFromTheFirstInput) {
  auto fc = std::make_shared<nn::Dense>(4);
  fc->initialize(init::One());
  EXPECT_EQ(fc->weight().shape(), (Shape{4, 0}));
  EXPECT_FALSE(fc->weight().initialized());
  EXPECT_ERROR(fc->weight().data(), "deferred until the first forward pass");
  const Tensor y = (*fc)(Tensor::full({2, 3, 5}, 1.0f));  // flatten: 15 in_units
  EXPECT_EQ(fc->weight().shape(), (Shape{4, 15}));
  EXPECT_EQ(y.shape(), (Shape{2, 4}));
  EXPECT_EQ(y.at({1, 3}), 15.0f);  // weights from the initializer, bias zero
  EXPECT_ERROR((*fc)(Tensor({2, 7})), "node '" + fc->prefix() + "fwd' (FullyConnected)");
}

TEST(Dense, DeferredInUnitsResolveWhileTracing) {
  // Two identical nets with one seed: one hybridized before any eager call
  // (shapes come from the trace), one run eagerly. Same weights, same output.
  auto make = [] {
    auto net = std::make_shared<nn::HybridSequential>();
    net->add(std::make_shared<nn::Dense>(8, "tanh"));
    net->add(std::make_shared<nn::Dense>(3));
    net->initialize(init::Xavier(), 5);
    return net;
  };
  auto traced = make(), eager = make();
  traced->hybridize();
  const Tensor x = Tensor::random_normal({2, 6}, 0.0f, 1.0f, 3);
  const Tensor a = (*traced)(x), b = (*eager)(x);
  const auto params = traced->collect_params();
  EXPECT_EQ(params[0]->shape(), (Shape{8, 6}));
  EXPECT_TRUE(params[0]->initialized());
  EXPECT_EQ(params[0]->data().to_vector(), eager->collect_params()[0]->data().to_vector());
  for (int64_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a.data()[i], b.data()[i], 1e-6);
}

TEST(Dense, UninitializedParametersSayWhatToDo) {
  auto fc = std::make_shared<nn::Dense>(2, "", true, 3);
  EXPECT_ERROR((*fc)(Tensor({1, 3})), "parameter '" + fc->prefix());
  EXPECT_ERROR((*fc)(Tensor({1, 3})), "is not initialized: call initialize() on the block first");
}

TEST(Initializers, GluonDefaultsAndRanges) {
  const Tensor xavier = init::Xavier().make({100, 50}, 1);
  const float bound = std::sqrt(3.0f / 75.0f);  // magnitude 3, fan average (50 + 100) / 2
  float largest = 0;
  for (float v : xavier.to_vector()) largest = std::fmax(largest, std::fabs(v));
  EXPECT_LE(largest, bound);
  EXPECT_GT(largest, 0.95f * bound);
  for (float v : init::Uniform().make({1000}, 2).to_vector()) EXPECT_LE(std::fabs(v), 0.07f);
  for (float v : init::Uniform(0.5f).make({1000}, 2).to_vector()) EXPECT_LE(std::fabs(v), 0.5f);
  double sq = 0;
  for (float v : init::Normal().make({10000}, 3).to_vector()) sq += static_cast<double>(v) * v;
  EXPECT_NEAR(std::sqrt(sq / 10000), 0.01, 0.001);
  EXPECT_EQ(init::Zero().make({3}, 0).to_vector(), std::vector<float>(3, 0.0f));
  EXPECT_EQ(init::One().make({3}, 0).to_vector(), std::vector<float>(3, 1.0f));
}

TEST(Initializers, SeededPerParameterAndBiasesZero) {
  auto make = [](uint64_t seed) {
    auto net = std::make_shared<nn::HybridSequential>();
    net->add(std::make_shared<nn::Dense>(4, "", true, 4));
    net->add(std::make_shared<nn::Dense>(4, "", true, 4));
    net->initialize(init::Uniform(1.0f), seed);
    return net;
  };
  auto a = make(11), b = make(11), c = make(12);
  const auto pa = a->collect_params(), pb = b->collect_params(), pc = c->collect_params();
  ASSERT_EQ(pa.size(), 4u);  // weight, bias of each layer
  EXPECT_EQ(pa[0]->data().to_vector(), pb[0]->data().to_vector());
  EXPECT_NE(pa[0]->data().to_vector(), pc[0]->data().to_vector());
  EXPECT_NE(pa[0]->data().to_vector(), pa[2]->data().to_vector());  // same shape, own stream
  EXPECT_EQ(pa[1]->data().to_vector(), std::vector<float>(4, 0.0f));
  EXPECT_EQ(pa[3]->data().to_vector(), std::vector<float>(4, 0.0f));
}

TEST(Names, GluonStyleBlockParameterAndNodeNames) {
  auto fc = std::make_shared<nn::Dense>(3, "relu");
  const std::string p = fc->prefix();
  EXPECT_TRUE(std::regex_match(p, std::regex("dense[0-9]+_"))) << p;
  EXPECT_EQ(fc->weight().name(), p + "weight");
  EXPECT_EQ(fc->bias().name(), p + "bias");
  auto next = std::make_shared<nn::Dense>(3);
  EXPECT_EQ(std::stoi(next->prefix().substr(5)), std::stoi(p.substr(5)) + 1);
  EXPECT_TRUE(std::regex_match(std::make_shared<nn::HybridSequential>()->prefix(),
                               std::regex("hybridsequential[0-9]+_")));
  EXPECT_TRUE(std::regex_match(std::make_shared<nn::Activation>("relu")->prefix(), std::regex("relu[0-9]+_")));

  fc->initialize();
  const Graph g = sym::to_graph({(*fc)(sym::var("data", {1, 5}))});
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].name, p + "fwd");
  EXPECT_EQ(g.nodes[0].inputs, (std::vector<std::string>{"data", p + "weight", p + "bias"}));
  EXPECT_EQ(g.nodes[1].name, p + "relu_fwd");
}

TEST(Blocks, SequentialRunsChildrenImperatively) {
  auto seq = std::make_shared<Sequential>();
  seq->add(std::make_shared<nn::Dense>(2, "", false, 2));
  seq->add(std::make_shared<nn::Activation>("relu"));
  seq->initialize(init::One());
  EXPECT_EQ((*seq)(Tensor::from_vector({1, 2}, {1, -3})).to_vector(), (std::vector<float>{0, 0}));
  EXPECT_EQ((*seq)(Tensor::from_vector({1, 2}, {1, 3})).to_vector(), (std::vector<float>{4, 4}));
}

class SumOfTwo : public HybridBlock {
 public:
  SumOfTwo() : HybridBlock("sumoftwo") {}
  std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& in) override {
    return {F.relu(in[0] * 2.0f - in[1]), in[1] + 1.0f};
  }
};

class Twice : public HybridBlock {
 public:
  std::vector<Tensor> hybrid_forward(const Ops&, const std::vector<Tensor>& in) override { return {in[0], in[0]}; }
};

TEST(Blocks, SingleOutputCallOfAMultiOutputBlockIsAnError) {
  auto block = std::make_shared<Twice>();
  EXPECT_ERROR((*block)(Tensor({1})), block->prefix() + ": returns 2 outputs, not 1");
  EXPECT_EQ((*block)(std::vector<Tensor>{Tensor({1})}).size(), 2u);
}

TEST(Blocks, MultiInputMultiOutputBlocks) {
  auto block = std::make_shared<SumOfTwo>();
  const Tensor a = Tensor::from_vector({2}, {1, 3}), b = Tensor::from_vector({2}, {4, 1});
  const auto eager = (*block)({a, b});
  ASSERT_EQ(eager.size(), 2u);
  EXPECT_EQ(eager[0].to_vector(), (std::vector<float>{0, 5}));
  EXPECT_EQ(eager[1].to_vector(), (std::vector<float>{5, 2}));

  const Graph g = block->trace({{2}, {2}}, "two");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"data0", "data1"}));  // call order
  EXPECT_EQ(g.outputs.size(), 2u);
  block->hybridize();
  const auto hybrid = (*block)({a, b});
  EXPECT_EQ(hybrid[0].to_vector(), eager[0].to_vector());
  EXPECT_EQ(hybrid[1].to_vector(), eager[1].to_vector());
}

}  // namespace
}  // namespace hybgen
