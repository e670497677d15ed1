// hybridize(): trace once per input shape, run the cached graph, see
// parameter changes, name symbols the same way twice, export what it traced.
#include <gtest/gtest.h>

#include <cmath>

#include "error_matchers.h"
#include "io/file_util.h"
#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"

namespace hybgen {
namespace {

class Counted : public HybridBlock {
 public:
  Counted() : HybridBlock("counted") {
    fc1 = register_child(std::make_shared<nn::Dense>(6, "relu"));
    fc2 = register_child(std::make_shared<nn::Dense>(2));
  }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    ++calls;
    return F.tanh((*fc2)((*fc1)(x)));
  }
  std::shared_ptr<nn::Dense> fc1, fc2;
  int calls = 0;
};

TEST(Hybridize, ReinitializedParametersAreRebound) {
  auto net = std::make_shared<Counted>();
  net->initialize(init::Xavier(), 1);
  const Tensor x = Tensor::random_normal({2, 4}, 0.0f, 1.0f, 2);
  net->hybridize();
  const Tensor first = (*net)(x);
  EXPECT_EQ(net->calls, 1);
  net->initialize(init::Xavier(), 99);  // new storage for every parameter
  const Tensor second = (*net)(x);
  EXPECT_EQ(net->calls, 1);  // rebound, not retraced
  net->fc2->bias().set_data(Tensor::full({2}, 0.25f));
  const Tensor third = (*net)(x);
  EXPECT_EQ(net->calls, 1);
  EXPECT_GT(max_abs_diff(first, second), 1e-3f);

  net->hybridize(false);  // eager again: hybrid_forward runs every call
  EXPECT_LE(max_abs_diff((*net)(x), third), 1e-6f);
  EXPECT_EQ(net->calls, 2);
  (*net)(x);
  EXPECT_EQ(net->calls, 3);
}

TEST(Hybridize, SymbolicCallsNameTheSameWayEachTime) {
  auto net = std::make_shared<Counted>();
  net->initialize(init::Xavier(), 3);
  const Tensor data = sym::var("data", {1, 4});
  const Tensor s1 = (*net)(data), s2 = (*net)(data);
  EXPECT_EQ(s1.str(), s2.str());
  EXPECT_EQ(s1.str(), "<Symbol " + net->prefix() + "tanh0>");
  // Both calls in one graph: the nodes are told apart, the weights shared.
  const Graph g = sym::to_graph({s1 + s2}, "twice");
  EXPECT_EQ(g.nodes.size(), 9u);  // 2 x (2 FullyConnected, relu, tanh) + add
  EXPECT_EQ(g.constants.size(), 4u);
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"data"}));
  EXPECT_EQ(g.nodes[0].name, net->fc1->prefix() + "fwd");
  EXPECT_EQ(g.nodes[4].name, net->fc1->prefix() + "fwd_1");
  Interpreter interp(g);
  const Tensor x = Tensor::random_normal({1, 4}, 0.0f, 1.0f, 4);
  const Tensor eager = (*net)(x);
  EXPECT_LE(max_abs_diff(interp.run({{"data", x}})[0], eager * 2.0f), 1e-6f);
}

TEST(Hybridize, VariablesOfOneNameMustAgree) {
  const Tensor a = sym::var("x", {2}), b = sym::var("x", {3});
  EXPECT_ERROR(sym::to_graph({a + 1.0f, b + 1.0f}), "two variables named 'x' disagree: (2,) and (3,)");
}

class Peeker : public HybridBlock {
 public:
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    return x.to_vector()[0] > 0 ? F.relu(x) : x;  // a data-dependent branch
  }
};

TEST(Hybridize, ReadingValuesWhileTracingExplainsWhatToDo) {
  auto block = std::make_shared<Peeker>();
  const Tensor x = Tensor::from_vector({1}, {2.0f});
  EXPECT_EQ((*block)(x).at({0}), 2.0f);
  block->hybridize();
  try {
    (*block)(x);
    FAIL() << "expected SymbolicValueError";
  } catch (const SymbolicValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("symbol 'data'"), std::string::npos) << m;
    EXPECT_NE(m.find("tensors inside hybrid_forward are symbolic placeholders"), std::string::npos) << m;
    EXPECT_NE(m.find("F.* ops"), std::string::npos) << m;
    EXPECT_NE(m.find("without hybridize()"), std::string::npos) << m;
  }
}

class Foreign : public HybridBlock {
 public:
  Tensor hybrid_forward(const Ops&, const Tensor& x) override { return x + sym::var("other", {1}); }
};

TEST(Hybridize, ASymbolFromOutsideTheInputsIsAnError) {
  auto block = std::make_shared<Foreign>();
  block->hybridize();
  EXPECT_ERROR((*block)(Tensor({1})), "reads a symbol that is not one of its inputs");
}

class Mix : public HybridBlock {
 public:
  Mix() : HybridBlock("mix") { fc = register_child(std::make_shared<nn::Dense>(3)); }
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override { return F.sigmoid((*fc)(x)); }
  std::vector<Tensor> hybrid_forward(const Ops& F, const std::vector<Tensor>& in) override {
    if (in.size() == 1) return {hybrid_forward(F, in[0])};
    return {F.broadcast_mul((*fc)(in[0]), in[1])};
  }
  std::shared_ptr<nn::Dense> fc;
};

TEST(Export, MultiInputRoundTrip) {
  TempDir tmp("hybgen-hybridize-test");
  auto block = std::make_shared<Mix>();
  block->initialize(init::Normal(0.5f), 8);
  EXPECT_ERROR(block->export_model(tmp.path() + "/mix"), "run the block on data once before export_model()");
  const Tensor a = Tensor::random_normal({2, 5}, 0.0f, 1.0f, 1), b = Tensor::random_normal({2, 3}, 0.0f, 1.0f, 2);
  const Tensor y = (*block)(std::vector<Tensor>{a, b})[0];
  block->export_model(tmp.path() + "/mix");
  const Graph g = load_model(tmp.path() + "/mix.json");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"data0", "data1"}));
  EXPECT_EQ(g.type("data1").shape, (Shape{2, 3}));
  Interpreter interp(g);
  EXPECT_LE(max_abs_diff(interp.run({{"data0", a}, {"data1", b}})[0], y), 1e-6f);
}

}  // namespace
}  // namespace hybgen
