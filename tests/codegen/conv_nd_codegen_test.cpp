// 1-D and 3-D convolution and pooling, and the normalisation ops, in graphs
// as models have them: each convolution followed by a bias-free ReLU the
// fuser folds into its epilogue, 3-D convolutions with weights known at
// generation time (im2col + GEMM on packed weights) and weights fed as
// inputs (the direct kernel; in 2-D also the depthwise one), pooling after them. Generated for the generic
// target and for this machine's on a 2-thread pool, and compared with the
// reference through hybgen verify (one compile per case; the registry test
// runs the ops' own examples on cuda-host).
#include <gtest/gtest.h>

#include "graph_builders.h"
#include "targets/target.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

using testing::attrs_of;
using testing::make_node;
using testing::seeded_values;

int64_t count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

Graph nd_graph() {
  Graph g;
  g.name = "convnd";
  // 3-D, packed weights: conv (3x3x3, pad 1) -> relu -> max pool 2x2x2 -> GroupNorm.
  g.add_input("vol", {{2, 3, 6, 7, 9}});
  g.add_constant("w3", Constant::f32({5, 3, 3, 3, 3}, seeded_values(count({5, 3, 3, 3, 3}), 1)));
  g.add_constant("b3", Constant::f32({5}, seeded_values(5, 2)));
  g.nodes.push_back(make_node("conv3", "Convolution", {"vol", "w3", "b3"},
                              attrs_of({{"kernel", std::vector<int64_t>{3, 3, 3}},
                                        {"num_filter", int64_t{5}},
                                        {"pad", std::vector<int64_t>{1, 1, 1}}})));
  g.nodes.push_back(make_node("relu3", "Activation", {"conv3"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("pool3", "Pooling", {"relu3"},
                              attrs_of({{"kernel", std::vector<int64_t>{2, 2, 2}},
                                        {"stride", std::vector<int64_t>{2, 2, 2}},
                                        {"pooling_convention", std::string("full")}})));
  // 3-D, weights as an input: the direct kernel, grouped, strided and padded, with its epilogue.
  g.add_input("w3in", {{6, 1, 2, 3, 3}});
  g.nodes.push_back(make_node("conv3d", "Convolution", {"vol", "w3in"},
                              attrs_of({{"kernel", std::vector<int64_t>{2, 3, 3}},
                                        {"num_filter", int64_t{6}},
                                        {"num_group", int64_t{3}},
                                        {"stride", std::vector<int64_t>{1, 2, 2}},
                                        {"pad", std::vector<int64_t>{0, 1, 1}},
                                        {"no_bias", true}})));
  g.nodes.push_back(make_node("relu3d", "Activation", {"conv3d"}, attrs_of({{"act_type", std::string("relu")}})));
  // 1-D: conv (k5, stride 2) -> relu -> avg pool -> InstanceNorm -> L2Normalization.
  g.add_input("seq", {{2, 4, 41}});
  g.add_constant("w1", Constant::f32({6, 4, 5}, seeded_values(count({6, 4, 5}), 3)));
  g.add_constant("b1", Constant::f32({6}, seeded_values(6, 4)));
  g.nodes.push_back(make_node("conv1", "Convolution", {"seq", "w1", "b1"},
                              attrs_of({{"kernel", std::vector<int64_t>{5}},
                                        {"num_filter", int64_t{6}},
                                        {"stride", std::vector<int64_t>{2}},
                                        {"pad", std::vector<int64_t>{2}},
                                        {"layout", std::string("NCW")}})));
  g.nodes.push_back(make_node("relu1", "Activation", {"conv1"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("pool1", "Pooling", {"relu1"},
                              attrs_of({{"kernel", std::vector<int64_t>{3}},
                                        {"pool_type", std::string("avg")},
                                        {"pad", std::vector<int64_t>{1}},
                                        {"count_include_pad", false}})));
  g.add_constant("in_gamma", Constant::f32({6}, seeded_values(6, 5)));
  g.add_constant("in_beta", Constant::f32({6}, seeded_values(6, 6)));
  g.nodes.push_back(make_node("inorm", "InstanceNorm", {"pool1", "in_gamma", "in_beta"}));
  g.nodes.push_back(
      make_node("l2", "L2Normalization", {"inorm"}, attrs_of({{"mode", std::string("channel")}})));
  // 2-D, weights as inputs (as ONNX models may feed them): one channel and
  // filter (the depthwise kernel) and two channels (the direct one); the plan
  // sizes scratch for packed weights, which these kernels leave unused.
  g.add_input("img", {{1, 2, 7, 8}});
  g.add_input("w2dw", {{1, 1, 3, 3}});
  g.nodes.push_back(make_node("img0", "slice_axis", {"img"},
                              attrs_of({{"axis", int64_t{1}}, {"begin", int64_t{0}}, {"end", int64_t{1}}})));
  g.nodes.push_back(make_node("conv2dw", "Convolution", {"img0", "w2dw"},
                              attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                        {"num_filter", int64_t{1}},
                                        {"pad", std::vector<int64_t>{1, 1}},
                                        {"no_bias", true}})));
  g.add_input("w2", {{4, 2, 3, 3}});
  g.nodes.push_back(make_node("conv2", "Convolution", {"img", "w2"},
                              attrs_of({{"kernel", std::vector<int64_t>{3, 3}},
                                        {"num_filter", int64_t{4}},
                                        {"stride", std::vector<int64_t>{2, 1}},
                                        {"pad", std::vector<int64_t>{1, 0}},
                                        {"no_bias", true}})));
  g.outputs = {"pool3", "relu3d", "l2", "conv2dw", "conv2"};
  return g;
}

void check(const std::string& target, int threads = 1) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.compile.target = find_target(target);
  options.threads = threads;
  const VerifyReport report = verify_model(nd_graph(), options);
  ASSERT_EQ(report.checks.size(), 5u);
  for (const auto& c : report.checks) {
    EXPECT_TRUE(c.ok) << target << ": " << c.name << " max rel error " << c.max_rel_error;
    EXPECT_EQ(c.against, "reference");
  }
}

TEST(ConvNdCodegen, GenericTargetMatchesTheReference) { check("generic"); }

TEST(ConvNdCodegen, ThisMachinesTargetOnTwoThreadsMatchesTheReference) { check(host_target().name, 2); }

}  // namespace
}  // namespace hybgen
