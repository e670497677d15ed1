// The interpreter on compile_graph's optimized result (what a hybridized
// block runs without a compiler) equals the plain interpreter on the graph as
// traced: folded BatchNorm, fused epilogues run in place, elementwise chains,
// views, Concat written in place, the interpreter's own convolution and
// dense kernels, and every registered op's examples.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "all_ops_graph.h"
#include "error_matchers.h"
#include "fusion_graphs.h"
#include "pipeline.h"
#include "runtime-lite/hybgen.h"
#include "zoo.h"

namespace hybgen {
namespace {

using namespace hybgen::testing;

CompiledGraph optimized(const Graph& g) {
  return compile_graph(g, CompileOptions::for_target(host_target()));
}

// The largest |a - b| over the largest |b|: verify's relative error
// (verify/verify.cpp compare_outputs), what generated code is held to.
double max_error(const Tensor& a, const Tensor& b) {
  EXPECT_EQ(a.shape(), b.shape());
  const std::vector<float> x = a.to_vector(), y = b.to_vector();
  double worst = 0, scale = 0;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
    const double d = std::fabs(double{x[i]} - y[i]);
    worst = std::isnan(d) ? 1e30 : std::max(worst, d);
    scale = std::max(scale, std::fabs(double{y[i]}));
  }
  return worst / std::max(scale, 1e-30);
}

std::map<std::string, Tensor> seeded_inputs(const Graph& g, uint64_t seed) {
  std::map<std::string, Tensor> in;
  for (const auto& name : g.inputs) in[name] = Tensor::random_normal(g.type(name).shape, 0.0f, 1.0f, seed++);
  return in;
}

// Both interpreters on the same inputs, twice (the second run reuses the
// arena and temp buffers of the first).
void expect_same_as_plain(const Graph& g, double tolerance = 1e-5) {
  Interpreter plain(g);
  Interpreter fast(optimized(g));
  for (uint64_t seed : {1u, 2u}) {
    const auto in = seeded_inputs(plain.graph(), seed);
    const auto want = plain.run(in);
    const auto got = fast.run(in);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(max_error(got[i], want[i]), tolerance) << g.name << " output " << i << " seed " << seed;
  }
}

TEST(OptimizedInterpreter, FoldedBatchNormAndResidualEpilogue) { expect_same_as_plain(resnet_basic_block()); }
TEST(OptimizedInterpreter, EpilogueOperandsPerChannelRowAndFull) { expect_same_as_plain(conv_with_operands()); }
TEST(OptimizedInterpreter, Im2colConvolutions) { expect_same_as_plain(im2col_convolutions()); }
TEST(OptimizedInterpreter, ConcatWrittenInPlaceAndFlattenView) { expect_same_as_plain(concat_of_branches()); }
TEST(OptimizedInterpreter, ClampedDepthwiseAndDenseLayers) { expect_same_as_plain(clamped_layers()); }
TEST(OptimizedInterpreter, SharedBuffersBetweenBranches) { expect_same_as_plain(unbalanced_branches()); }

// The interpreter's own convolution paths, batch 2: Winograd (3x3 stride 1
// on 15x17, padded: partial tiles at the bottom and right), 1x1 straight to
// sgemm, im2col with stride 2 and dilation, grouped (im2col per group),
// depthwise at stride 1 with dilation and at stride 2 with two filters per
// channel; each with a bias and a relu.
TEST(OptimizedInterpreter, ConvolutionPaths) {
  Graph g;
  g.name = "conv_paths";
  g.add_input("data", {{2, 16, 15, 17}});
  auto conv = [&](const std::string& name, const std::string& x, int64_t c, int64_t f, int64_t k, Attrs attrs,
                  uint32_t seed) {
    g.add_constant(name + "_weight", Constant::f32({f, c, k, k}, seeded_values(f * c * k * k, seed)));
    g.add_constant(name + "_bias", Constant::f32({f}, seeded_values(f, seed + 1)));
    g.nodes.push_back(make_node(name, "Convolution", {x, name + "_weight", name + "_bias"}, std::move(attrs)));
    g.nodes.push_back(make_node(name + "_relu", "Activation", {name}, attrs_of({{"act_type", std::string("relu")}})));
    return name + "_relu";
  };
  const std::string winograd = conv("winograd", "data", 16, 20, 3, conv_attrs(20, 3, 1, false), 11);
  const std::string pointwise = conv("pointwise", winograd, 20, 24, 1, conv_attrs(24, 1, 0, false), 13);
  Attrs strided = conv_attrs(8, 3, 2, false);
  strided.set("stride", std::vector<int64_t>{2, 2});
  strided.set("dilate", std::vector<int64_t>{2, 2});
  const std::string strided_out = conv("strided", pointwise, 24, 8, 3, strided, 15);
  Attrs grouped = conv_attrs(12, 3, 1, false);
  grouped.set("num_group", int64_t{4});
  const std::string grouped_out = conv("grouped", pointwise, 6, 12, 3, grouped, 17);
  Attrs depthwise = conv_attrs(12, 3, 2, false);
  depthwise.set("num_group", int64_t{12});
  depthwise.set("dilate", std::vector<int64_t>{2, 2});
  const std::string depthwise_out = conv("depthwise", grouped_out, 1, 12, 3, depthwise, 19);
  Attrs doubling = conv_attrs(24, 3, 1, false);
  doubling.set("num_group", int64_t{12});
  doubling.set("stride", std::vector<int64_t>{2, 2});
  g.outputs = {winograd,    pointwise,     strided_out,
               grouped_out, depthwise_out, conv("doubling", depthwise_out, 1, 24, 3, doubling, 21)};
  expect_same_as_plain(g);
}

TEST(OptimizedInterpreter, EveryRegisteredOpExample) {
  const AllOpsGraph all = all_ops_graph(5, {}, Backend::kCpp);  // the fast interpreter runs the C++ kernels
  Interpreter plain(all.graph);
  Interpreter fast(optimized(all.graph));
  std::map<std::string, Tensor> in;
  for (const auto& [name, array] : all.inputs) in[name] = Tensor::from_vector(array.shape, array.data);
  const auto want = plain.run(in);
  const auto got = fast.run(in);
  for (std::size_t i = 0; i < want.size(); ++i) {
    const auto& origin = all.origin.at(all.graph.outputs[i]);
    EXPECT_LE(max_error(got[i], want[i]), 1e-5) << origin.op << " example " << origin.example;
  }
}

// Zoo models small enough for a unit test, against eager execution.
void expect_zoo_model_matches_eager(const std::string& name, const Shape& input) {
  const auto& models = zoo::models();
  auto m = std::find_if(models.begin(), models.end(), [&](const zoo::ZooModel& z) { return z.name == name; });
  ASSERT_NE(m, models.end());
  auto net = m->build();
  net->initialize(init::Xavier(), 42);
  const Tensor x = Tensor::random_normal(input, 0.0f, 1.0f, 7);
  const Tensor eager = (*net)(x);
  const Graph g = net->trace({input}, name, true);
  Interpreter fast(optimized(g));
  const auto got = fast.run({{g.inputs.at(0), x}});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_LE(max_error(got[0], eager), 1e-5) << name;
  EXPECT_LE(max_error(fast.run({{g.inputs.at(0), x}})[0], eager), 1e-5) << name << ", second run";
}

TEST(OptimizedInterpreter, LenetMatchesEager) { expect_zoo_model_matches_eager("lenet", {1, 1, 28, 28}); }
TEST(OptimizedInterpreter, TransformerEncoderMatchesEager) {
  expect_zoo_model_matches_eager("transformer_encoder", {1, 128, 256});
}
// Small maps keep the convolutional models fast where their pooling allows:
// every kind of layer runs (SqueezeNet: Concat written in place).
TEST(OptimizedInterpreter, ResnetMatchesEager) { expect_zoo_model_matches_eager("resnet18_v1", {1, 3, 64, 64}); }
TEST(OptimizedInterpreter, MobilenetV2MatchesEager) { expect_zoo_model_matches_eager("mobilenet_v2", {1, 3, 64, 64}); }
TEST(OptimizedInterpreter, SqueezenetMatchesEager) { expect_zoo_model_matches_eager("squeezenet1_1", {1, 3, 224, 224}); }

TEST(OptimizedInterpreter, NeedsTheWeightsInTheGraph) {
  Graph g = resnet_basic_block();
  CompiledGraph c = optimized(g);
  c.graph.constants.begin()->second.data.clear();
  EXPECT_ERROR(Interpreter{c}, "has no data");
}

TEST(OptimizedInterpreter, ChecksItsInputs) {
  Interpreter fast(optimized(resnet_basic_block()));
  EXPECT_ERROR(fast.run({}), "input 'data' is missing, the graph expects shape (1, 8, 6, 6)");
  EXPECT_ERROR(fast.run({{"data", Tensor({1, 8, 6, 5})}}), "input 'data' has shape (1, 8, 6, 5)");
}

}  // namespace
}  // namespace hybgen
