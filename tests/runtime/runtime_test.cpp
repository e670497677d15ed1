// runtime-lite: tensors, eager ops, blocks and names, hybridize(), symbols,
// export and the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "io/file_util.h"
#include "ops/op_util.h"
#include "runtime-lite/hybgen.h"
#include "runtime/tensor_compare.h"

namespace hybgen {
namespace {

class Net : public HybridBlock {
 public:
  Net() : HybridBlock("net") {
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

TEST(Tensor, CreationArithmeticAndPrinting) {
  const Tensor a = Tensor::from_vector({2, 3}, {1, 2, 3, 4, 5, 6});
  const Tensor b = Tensor::from_vector({3}, {10, 20, 30});
  const Tensor c = a + b;  // broadcast over rows
  EXPECT_EQ(c.shape(), (Shape{2, 3}));
  EXPECT_EQ(c.at({1, 2}), 36.0f);
  EXPECT_EQ((a * 2.0f).at({0, 1}), 4.0f);
  EXPECT_EQ((1.0f - a).at({0, 0}), 0.0f);
  EXPECT_EQ((12.0f / a).at({1, 2}), 2.0f);
  EXPECT_EQ((a / b).at({0, 0}), 0.1f);
  EXPECT_NE(a.str().find("[[1, 2, 3],"), std::string::npos) << a.str();
  EXPECT_NE(a.str().find("<Tensor 2x3 float32>"), std::string::npos);
  const Tensor shared = a;
  Tensor copy = a.copy();
  copy.data()[0] = 100;
  EXPECT_EQ(shared.at({0, 0}), 1.0f);
  EXPECT_THROW(a.at({2, 0}), Error);
}

TEST(Tensor, SeededRandomIsReproducible) {
  const Tensor x = Tensor::random_normal({1000}, 0.0f, 1.0f, 7);
  EXPECT_EQ(x.to_vector(), Tensor::random_normal({1000}, 0.0f, 1.0f, 7).to_vector());
  EXPECT_NE(x.to_vector(), Tensor::random_normal({1000}, 0.0f, 1.0f, 8).to_vector());
  double mean = 0, var = 0;
  for (float v : x.to_vector()) mean += v;
  mean /= 1000;
  for (float v : x.to_vector()) var += (v - mean) * (v - mean);
  EXPECT_NEAR(mean, 0.0, 0.1);
  EXPECT_NEAR(var / 1000, 1.0, 0.15);
  const Tensor u = Tensor::random_uniform({1000}, -2.0f, 3.0f, 1);
  for (float v : u.to_vector()) EXPECT_TRUE(v >= -2.0f && v < 3.0f);
}

TEST(Blocks, DenseComputesByHandAndInfersInUnits) {
  auto fc = std::make_shared<nn::Dense>(2, "relu");
  fc->initialize(init::One());
  EXPECT_FALSE(fc->weight().shape_known());
  const Tensor x = Tensor::from_vector({1, 3}, {1, -2, 0.5f});
  const Tensor y = (*fc)(x);
  EXPECT_EQ(fc->weight().shape(), (Shape{2, 3}));
  EXPECT_EQ(y.at({0, 0}), 0.0f);  // relu(1 - 2 + 0.5 + bias 0)
  fc->weight().set_data(Tensor::from_vector({2, 3}, {1, 0, 0, 0, 0, 2}));
  const Tensor z = (*fc)(x);
  EXPECT_EQ(z.at({0, 0}), 1.0f);
  EXPECT_EQ(z.at({0, 1}), 1.0f);
}

TEST(Blocks, GluonStyleNames) {
  auto a = std::make_shared<nn::Dense>(4);
  auto b = std::make_shared<nn::Dense>(4);
  EXPECT_EQ(a->weight().name().substr(0, 5), "dense");
  EXPECT_NE(a->weight().name(), b->weight().name());
  EXPECT_EQ(a->weight().name(), a->prefix() + "weight");
  EXPECT_EQ(a->bias().name(), a->prefix() + "bias");
}

TEST(Hybridize, TracesOnceThenRunsTheCachedGraph) {
  auto net = std::make_shared<Net>();
  net->initialize(init::Xavier(), 42);
  const Tensor x = Tensor::random_normal({1, 512}, 0.0f, 1.0f, 7);
  const Tensor eager = (*net)(x);
  EXPECT_EQ(net->calls, 1);
  net->hybridize();
  const Tensor traced = (*net)(x);
  const Tensor cached = (*net)(x);
  EXPECT_EQ(net->calls, 2);  // the third call ran the graph
  EXPECT_LE(max_abs_diff(eager, traced), 1e-6);
  EXPECT_LE(max_abs_diff(eager, cached), 1e-6);
  (*net)(Tensor::random_normal({3, 512}, 0.0f, 1.0f, 1));  // a new shape traces again
  EXPECT_EQ(net->calls, 3);
  // Parameter changes are seen by the cached graph (it binds live tensors).
  net->fc3->bias().data().data()[0] += 1.0f;
  EXPECT_NEAR((*net)(x).at({0, 0}), eager.at({0, 0}) + 1.0f, 1e-5);
}

TEST(Symbols, PrintSerialiseAndRefuseValueReads) {
  auto net = std::make_shared<Net>();
  net->initialize();
  const Tensor s = (*net)(sym::var("data"));
  EXPECT_TRUE(s.is_symbolic());
  std::ostringstream os;
  os << s;
  EXPECT_EQ(os.str(), "<Symbol " + net->fc3->prefix() + "fwd>");
  const auto json = nlohmann::json::parse(s.tojson());
  EXPECT_EQ(json["nodes"].size(), 5u);
  EXPECT_EQ(json["nodes"][0]["op"], "FullyConnected");
  EXPECT_EQ(json["inputs"][0]["name"], "data");
  EXPECT_TRUE(json["inputs"][0]["shape"].is_null());
  try {
    s.data();
    FAIL();
  } catch (const SymbolicValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("cannot read the values of symbol"), std::string::npos);
    EXPECT_NE(m.find("without hybridize()"), std::string::npos);
  }
}

class ElementPeeker : public HybridBlock {
 public:
  Tensor hybrid_forward(const Ops& F, const Tensor& x) override {
    if (x.at({0}) > 0) return F.relu(x);  // a data-dependent branch cannot be traced
    return x;
  }
};

TEST(Symbols, ReadingValuesWhileTracingIsAClearError) {
  auto p = std::make_shared<ElementPeeker>();
  const Tensor x = Tensor::from_vector({1}, {2.0f});
  EXPECT_EQ((*p)(x).at({0}), 2.0f);  // eager works
  p->hybridize();
  EXPECT_THROW((*p)(x), SymbolicValueError);
}

TEST(Symbols, TutorialMemoryExample) {
  const Tensor a = sym::var("a", Shape{10}), b = sym::var("b", Shape{10});
  const Tensor d = b * a + 1.0f;
  const Graph g = sym::to_graph({d}, "memory");
  ASSERT_EQ(g.nodes.size(), 2u);
  EXPECT_EQ(g.nodes[0].op, "broadcast_mul");
  EXPECT_EQ(g.nodes[1].op, "_plus_scalar");
  EXPECT_EQ(g.inputs, (std::vector<std::string>{"b", "a"}));
  Interpreter interp(g);
  const auto out = interp.run({{"a", Tensor::full({10}, 2.0f)}, {"b", Tensor::full({10}, 3.0f)}});
  EXPECT_EQ(out[0].at({9}), 7.0f);
  EXPECT_LE(interp.plan().arena_bytes, 40u);
}

TEST(Ops, SliceAndSplitEagerly) {
  const Ops F;
  const Tensor x = Tensor::from_vector({2, 4}, {0, 1, 2, 3, 4, 5, 6, 7});
  const Tensor s = F.slice(x, {kSliceNone, 3}, {kSliceNone, 0}, {1, -2});  // columns 3, 1 reversed
  EXPECT_EQ(s.shape(), (Shape{2, 2}));
  EXPECT_EQ(s.to_vector(), (std::vector<float>{3, 1, 7, 5}));
  const auto parts = F.split(x, 2, 1);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[1].to_vector(), (std::vector<float>{2, 3, 6, 7}));
  EXPECT_EQ(F.slice_axis(x, 0, 1, 2).to_vector(), (std::vector<float>{4, 5, 6, 7}));
}

TEST(Export, RoundTripThroughFilesReproducesTheBlock) {
  TempDir tmp("hybgen-runtime-test");
  auto seq = std::make_shared<nn::HybridSequential>();
  seq->add(std::make_shared<nn::Dense>(16, "relu"));
  seq->add(std::make_shared<nn::Dropout>(0.5));
  seq->add(std::make_shared<nn::Dense>(3));
  seq->initialize(init::Xavier(), 3);
  EXPECT_THROW(seq->export_model(tmp.path() + "/early"), Error);  // no forward pass yet
  const Tensor x = Tensor::random_normal({2, 5}, 0.0f, 1.0f, 9);
  const Tensor y = (*seq)(x);
  seq->export_model(tmp.path() + "/seq");
  const Graph g = load_model(tmp.path() + "/seq.json");
  EXPECT_EQ(g.name, "seq");
  EXPECT_EQ(g.nodes.size(), 4u);  // Dropout is still in the exported graph
  Interpreter interp(g);
  EXPECT_EQ(interp.graph().nodes.size(), 3u);  // and gone after the passes
  EXPECT_LE(max_abs_diff(interp.run({{"data", x}})[0], y), 1e-6);
}

TEST(Interpreter, InputErrorsNameTheInput) {
  const Tensor a = sym::var("a", Shape{4});
  Interpreter interp(sym::to_graph({a * 2.0f}, "g"));
  EXPECT_THROW(interp.run({}), Error);
  try {
    interp.run({{"a", Tensor({5})}});
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 'a' has shape (5,), the graph expects (4,)"), std::string::npos);
  }
}

}  // namespace
}  // namespace hybgen
