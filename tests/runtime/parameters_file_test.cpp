// save_parameters / load_parameters: names by place in the tree, so another
// instance of the network loads them; bad files are refused before any
// parameter changes.
#include <gtest/gtest.h>

#include "error_matchers.h"
#include "io/file_util.h"
#include "io/safetensors.h"
#include "runtime-lite/hybgen.h"

namespace hybgen {
namespace {

class Two : public HybridBlock {
 public:
  Two() : HybridBlock("two") {
    fc1 = register_child(std::make_shared<nn::Dense>(8, "relu"));
    fc2 = register_child(std::make_shared<nn::Dense>(3));
  }
  Tensor hybrid_forward(const Ops&, const Tensor& x) override { return (*fc2)((*fc1)(x)); }
  std::shared_ptr<nn::Dense> fc1, fc2;
};

std::shared_ptr<Two> initialized(uint64_t seed) {
  auto net = std::make_shared<Two>();
  net->initialize(init::Xavier(), seed);
  (*net)(Tensor::random_normal({1, 5}, 0.0f, 1.0f, 1));  // deferred shapes resolved
  return net;
}

TEST(ParametersFile, AnotherInstanceLoadsThemByPlace) {
  TempDir tmp("params");
  const std::string path = tmp.path() + "/two.safetensors";
  auto a = initialized(1);
  a->save_parameters(path);
  const auto names = read_safetensors(path);
  EXPECT_EQ(names.size(), 4u);
  EXPECT_EQ(names.count("0.weight"), 1u);
  EXPECT_EQ(names.count("1.bias"), 1u);

  auto b = initialized(2);  // other prefixes, other values
  ASSERT_NE(a->fc1->weight().name(), b->fc1->weight().name());
  const Tensor x = Tensor::random_normal({2, 5}, 0.0f, 1.0f, 3);
  b->load_parameters(path);
  EXPECT_EQ((*a)(x).to_vector(), (*b)(x).to_vector());
}

TEST(ParametersFile, BadFilesChangeNothing) {
  TempDir tmp("params");
  auto net = initialized(1);
  const std::vector<float> before = net->fc1->weight().data().to_vector();
  const std::string wrong_shape = tmp.path() + "/shape.safetensors";
  write_safetensors(wrong_shape, {{"0.weight", Constant::f32({8, 5}, std::vector<float>(40, 1.0f))},
                                  {"0.bias", Constant::f32({8}, std::vector<float>(8, 1.0f))},
                                  {"1.weight", Constant::f32({3, 7}, std::vector<float>(21, 1.0f))},
                                  {"1.bias", Constant::f32({3}, std::vector<float>(3, 1.0f))}});
  EXPECT_ERROR(net->load_parameters(wrong_shape), "parameter '1.weight' has shape (3, 7)");
  EXPECT_EQ(net->fc1->weight().data().to_vector(), before);  // checked before anything changed

  const std::string partial = tmp.path() + "/partial.safetensors";
  write_safetensors(partial, {{"0.bias", Constant::f32({8}, std::vector<float>(8, 0.5f))},
                              {"2.weight", Constant::f32({1}, {1.0f})}});
  EXPECT_ERROR(net->load_parameters(partial), "has no parameter '0.weight'");
  EXPECT_ERROR(net->load_parameters(partial, true), "parameter '2.weight' belongs to no parameter");
  net->load_parameters(partial, true, true);
  EXPECT_EQ(net->fc1->bias().data().to_vector(), std::vector<float>(8, 0.5f));
  EXPECT_EQ(net->fc1->weight().data().to_vector(), before);

  EXPECT_ERROR(net->load_parameters(tmp.path() + "/missing.safetensors"), "missing.safetensors");
}

}  // namespace
}  // namespace hybgen
