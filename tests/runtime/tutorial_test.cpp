// The Gluon hybridize tutorial's user code, exactly as the README shows it:
// if this file stops compiling or its checks fail, the frontend broke its
// promise to model authors.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "io/file_util.h"
#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"

namespace {

using namespace hybgen;

class Net : public HybridBlock {
 public:
  Net() {
    fc1 = register_child(std::make_shared<nn::Dense>(256));
    fc2 = register_child(std::make_shared<nn::Dense>(128));
    fc3 = register_child(std::make_shared<nn::Dense>(2));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    ++calls;
    Tensor h = F.relu((*fc1)(x));
    h = F.relu((*fc2)(h));
    return (*fc3)(h);
  }
  std::shared_ptr<nn::Dense> fc1, fc2, fc3;
  int calls = 0;
};

TEST(Tutorial, NetRunsEagerHybridizedCachedAndSymbolically) {
  TempDir tmp("hybgen-tutorial-test");
  auto net = std::make_shared<Net>();
  net->initialize(init::Xavier(), /*seed=*/42);
  Tensor x = Tensor::random_normal({1, 512}, 0.0f, 1.0f, /*seed=*/7);
  Tensor y = (*net)(x);
  net->hybridize();
  Tensor y2 = (*net)(x);
  Tensor y3 = (*net)(x);
  EXPECT_EQ(net->calls, 2);  // eager + one trace; the cached graph ran the third call
  EXPECT_EQ(y.shape(), (Shape{1, 2}));
  EXPECT_LE(max_abs_diff(y, y2), 1e-6f);
  EXPECT_LE(max_abs_diff(y, y3), 1e-6f);

  Tensor s = (*net)(sym::var("data"));
  std::ostringstream printed;
  printed << s;
  EXPECT_EQ(printed.str(), "<Symbol " + net->fc3->prefix() + "fwd>");
  const auto json = nlohmann::json::parse(s.tojson());
  EXPECT_EQ(json["nodes"].size(), 5u);  // 3 FullyConnected + 2 relu
  EXPECT_EQ(json["nodes"][1]["name"], net->prefix() + "relu0");

  net->export_model(tmp.path() + "/mlp");
  EXPECT_TRUE(std::filesystem::exists(tmp.path() + "/mlp.json"));
  EXPECT_TRUE(std::filesystem::exists(tmp.path() + "/mlp.safetensors"));
  EXPECT_LE(max_abs_diff(Interpreter(load_model(tmp.path() + "/mlp.json")).run({{"data", x}})[0], y), 1e-6f);
}

TEST(Tutorial, DefaultPrefixOfAUserBlockIsHybridblock) {
  Net net;
  EXPECT_EQ(net.prefix().rfind("hybridblock", 0), 0u) << net.prefix();
  EXPECT_EQ(net.prefix().back(), '_');
}

TEST(Tutorial, SequentialFormExports) {
  TempDir tmp("hybgen-tutorial-test");
  auto seq = std::make_shared<nn::HybridSequential>();
  seq->add(std::make_shared<nn::Dense>(256, "relu"));
  seq->add(std::make_shared<nn::Dense>(128, "relu"));
  seq->add(std::make_shared<nn::Dense>(2));
  seq->initialize(init::Xavier(), 42);
  const Tensor x = Tensor::random_normal({1, 512}, 0.0f, 1.0f, 7);
  const Tensor eager = (*seq)(x);
  seq->hybridize();
  const Tensor hybrid = (*seq)(x);
  EXPECT_LE(max_abs_diff(eager, hybrid), 1e-6f);
  seq->export_model(tmp.path() + "/p");
  const Graph g = load_model(tmp.path() + "/p.json");
  EXPECT_EQ(g.name, "p");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"data"}));
  EXPECT_EQ(g.nodes.size(), 5u);  // 3 FullyConnected + 2 Activation
  EXPECT_EQ(g.constants.size(), 6u);
  EXPECT_TRUE(g.constants.begin()->second.has_data());

  // The other initializers of the tutorial are accepted the same way.
  seq->initialize(init::Uniform(0.1f), 1);
  seq->initialize(init::Normal(0.02f), 2);
  EXPECT_EQ((*seq)(x).shape(), (Shape{1, 2}));
}

TEST(Tutorial, SymbolicMemoryExample) {
  auto a = sym::var("a", {10});
  auto b = sym::var("b", {10});
  auto c = b * a;
  auto d = c + 1.0f;
  Graph g = sym::to_graph({d}, "memory");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, "broadcast_mul");
  EXPECT_EQ(g.nodes[1].op, "_plus_scalar");
  EXPECT_EQ(g.nodes[1].attrs.get_float("scalar"), 1.0);
  EXPECT_EQ(g.nodes[1].inputs, (std::vector<std::string>{g.nodes[0].outputs[0]}));
  EXPECT_EQ(g.outputs, g.nodes[1].outputs);
  EXPECT_EQ(g.type("b").shape, (Shape{10}));
}

}  // namespace
