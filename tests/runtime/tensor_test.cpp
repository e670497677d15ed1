// Tensor: creation, shared storage, seeded random values, printing, and the
// arithmetic operators (eager values by hand, symbolic ops by node).
#include <gtest/gtest.h>

#include <string>

#include "error_matchers.h"
#include "runtime-lite/hybgen.h"

namespace hybgen {
namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(TensorCreation, ZerosFullAndFromVector) {
  const Tensor z({2, 3});
  EXPECT_EQ(z.shape(), (Shape{2, 3}));
  EXPECT_EQ(z.size(), 6);
  EXPECT_EQ(z.dtype(), DType::kFloat32);
  EXPECT_EQ(z.to_vector(), std::vector<float>(6, 0.0f));
  EXPECT_EQ(Tensor::full({4}, 2.5f).to_vector(), std::vector<float>(4, 2.5f));
  const Tensor t = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
  EXPECT_EQ(t.at({1, 0}), 3.0f);
  EXPECT_FALSE(t.is_symbolic());
  EXPECT_FALSE(Tensor().defined());
  EXPECT_ERROR(Tensor::from_vector({2, 2}, {1, 2, 3}), "3 values for shape (2, 2)");
  EXPECT_ERROR(t.at({1}), "1 indices for a tensor of rank 2");
}

TEST(TensorCreation, CopiesShareStorageUnlessCopied) {
  Tensor a = Tensor::from_vector({3}, {1, 2, 3});
  Tensor alias = a;
  alias.data()[0] = 10;
  EXPECT_EQ(a.at({0}), 10.0f);  // like NDArray: assignment shares
  Tensor deep = a.copy();
  deep.data()[1] = 20;
  EXPECT_EQ(a.at({1}), 2.0f);
}

TEST(TensorCreation, RandomValuesAreTheSameOnEveryPlatform) {
  // mt19937_64 is specified by the standard; Box-Muller on its raw output
  // (not std::normal_distribution) keeps these values fixed everywhere.
  const Tensor n = Tensor::random_normal({4}, 0.0f, 1.0f, 7);
  EXPECT_NEAR(n.at({0}), 1.59139991f, 1e-6);
  EXPECT_NEAR(n.at({1}), -0.524813235f, 1e-6);
  EXPECT_NEAR(n.at({3}), -0.313931525f, 1e-6);
  const Tensor u = Tensor::random_uniform({2}, 0.0f, 1.0f, 7);
  EXPECT_NEAR(u.at({0}), 0.754385293f, 1e-7);
  const Tensor shifted = Tensor::random_normal({4}, 5.0f, 2.0f, 7);
  EXPECT_NEAR(shifted.at({0}), 5.0f + 2.0f * 1.59139991f, 1e-5);
}

TEST(TensorPrinting, SmallTensorsInFull) {
  const Tensor t = Tensor::from_vector({2, 3}, {1, 2.5f, 3, 4, 5, -6});
  EXPECT_EQ(t.str(), "[[1, 2.5, 3],\n [4, 5, -6]]\n<Tensor 2x3 float32>");
  EXPECT_EQ(Tensor::full({}, 3.0f).str(), "3\n<Tensor scalar float32>");
  const Tensor medium({8, 9});  // 72 values: numpy prints them all
  EXPECT_EQ(medium.str().find("..."), std::string::npos);
  EXPECT_EQ(count(medium.str(), "0"), 72u);
}

TEST(TensorPrinting, BigTensorsShowTheirEdges) {
  std::vector<float> values(20 * 100);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const std::string text = Tensor::from_vector({20, 100}, values).str();
  EXPECT_NE(text.find("[[0, 1, 2, ..., 97, 98, 99],"), std::string::npos) << text;
  EXPECT_NE(text.find(" ...,\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[1900, 1901, 1902, ..., 1997, 1998, 1999]]"), std::string::npos) << text;
  EXPECT_EQ(text.find("1000"), std::string::npos);  // row 10 is elided
  EXPECT_NE(text.find("<Tensor 20x100 float32>"), std::string::npos);
}

TEST(TensorArithmetic, BroadcastOperatorsByHand) {
  const Tensor a = Tensor::from_vector({2, 2}, {1, 2, 3, 4});
  const Tensor row = Tensor::from_vector({2}, {10, 20});
  const Tensor col = Tensor::from_vector({2, 1}, {2, 4});
  EXPECT_EQ((a + row).to_vector(), (std::vector<float>{11, 22, 13, 24}));
  EXPECT_EQ((a - row).to_vector(), (std::vector<float>{-9, -18, -7, -16}));
  EXPECT_EQ((a * col).to_vector(), (std::vector<float>{2, 4, 12, 16}));
  EXPECT_EQ((a / col).to_vector(), (std::vector<float>{0.5f, 1, 0.75f, 1}));
  EXPECT_ERROR(a + Tensor({3}), "cannot be broadcast");
}

TEST(TensorArithmetic, ScalarOperatorsOnEitherSide) {
  const Tensor a = Tensor::from_vector({3}, {1, 2, 4});
  EXPECT_EQ((a + 1.0f).to_vector(), (std::vector<float>{2, 3, 5}));
  EXPECT_EQ((1.0f + a).to_vector(), (std::vector<float>{2, 3, 5}));
  EXPECT_EQ((a - 1.0f).to_vector(), (std::vector<float>{0, 1, 3}));
  EXPECT_EQ((1.0f - a).to_vector(), (std::vector<float>{0, -1, -3}));
  EXPECT_EQ((a * 3.0f).to_vector(), (std::vector<float>{3, 6, 12}));
  EXPECT_EQ((3.0f * a).to_vector(), (std::vector<float>{3, 6, 12}));
  EXPECT_EQ((a / 2.0f).to_vector(), (std::vector<float>{0.5f, 1, 2}));
  EXPECT_EQ((4.0f / a).to_vector(), (std::vector<float>{4, 2, 1}));
}

TEST(TensorArithmetic, SymbolicOperatorsBuildTheMXNetOps) {
  const Tensor a = sym::var("a", {3}), b = sym::var("b", {3});
  const std::vector<std::pair<Tensor, std::string>> cases = {
      {a + b, "broadcast_add"},  {a - b, "broadcast_sub"},  {a * b, "broadcast_mul"},
      {a / b, "broadcast_div"},  {a + 1.0f, "_plus_scalar"}, {1.0f + a, "_plus_scalar"},
      {a - 1.0f, "_minus_scalar"}, {1.0f - a, "_rminus_scalar"}, {a * 2.0f, "_mul_scalar"},
      {2.0f * a, "_mul_scalar"}, {a / 2.0f, "_div_scalar"},  {2.0f / a, "_rdiv_scalar"}};
  for (const auto& [t, op] : cases) {
    EXPECT_TRUE(t.is_symbolic());
    EXPECT_EQ(t.shape(), (Shape{3}));  // known input shapes give known output shapes
    const Graph g = sym::to_graph({t});
    ASSERT_EQ(g.nodes.size(), 1u);
    EXPECT_EQ(g.nodes[0].op, op);
  }
}

TEST(TensorSymbols, ValuesOfASymbolCannotBeRead) {
  const Tensor s = sym::var("x", {2});
  EXPECT_EQ(s.str(), "<Symbol x>");
  EXPECT_THROW(s.data(), SymbolicValueError);
  EXPECT_THROW(s.at({0}), SymbolicValueError);
  EXPECT_THROW(s.to_vector(), SymbolicValueError);
  EXPECT_ERROR(sym::var("y").shape(), "symbol 'y' has no known shape");
  EXPECT_ERROR(Tensor::full({1}, 1.0f).tojson(), "tojson() is for symbols");
}

}  // namespace
}  // namespace hybgen
