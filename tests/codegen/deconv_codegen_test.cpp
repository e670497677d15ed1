// Transposed convolutions in generated C++ with what fusion hangs on them: a
// relu and a residual add as the kernel's epilogue, and a U-Net step (kernel
// 2 stride 2 up, skip concatenated). The registry test covers the kernels
// alone; here the epilogues and the plan's scratch meet them.
#include <gtest/gtest.h>

#include "emit/generate.h"
#include "graph_builders.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

Attrs deconv_attrs(int64_t filters, int64_t kernel, int64_t stride, int64_t pad, bool no_bias) {
  return testing::attrs_of({{"kernel", std::vector<int64_t>{kernel, kernel}},
                            {"stride", std::vector<int64_t>{stride, stride}},
                            {"pad", std::vector<int64_t>{pad, pad}},
                            {"num_filter", filters},
                            {"no_bias", no_bias}});
}

// data (1x8x5x6) -> Deconvolution 4x4 stride 2 pad 1 (GEMM + col2im) -> + residual -> relu;
// the same data -> Deconvolution 2x2 stride 2 (columns stored, not added) -> clip,
// concatenated with the skip; a depthwise one (direct kernel) with a relu.
Graph deconv_graph() {
  using testing::make_node;
  using testing::seeded_values;
  Graph g;
  g.name = "deconvs";
  g.add_input("data", {{1, 8, 5, 6}});
  g.add_input("residual", {{1, 6, 10, 12}});
  g.add_input("skip", {{1, 3, 10, 12}});
  g.add_constant("a_weight", Constant::f32({8, 6, 4, 4}, seeded_values(8 * 6 * 16, 71)));
  g.add_constant("a_bias", Constant::f32({6}, seeded_values(6, 72)));
  g.add_constant("b_weight", Constant::f32({8, 5, 2, 2}, seeded_values(8 * 5 * 4, 73)));
  g.add_constant("b_bias", Constant::f32({5}, seeded_values(5, 74)));
  g.add_constant("c_weight", Constant::f32({8, 1, 3, 3}, seeded_values(8 * 9, 75)));
  g.nodes.push_back(make_node("a", "Deconvolution", {"data", "a_weight", "a_bias"}, deconv_attrs(6, 4, 2, 1, false)));
  g.nodes.push_back(make_node("a_res", "broadcast_add", {"a", "residual"}));
  g.nodes.push_back(
      make_node("a_relu", "Activation", {"a_res"}, testing::attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("b", "Deconvolution", {"data", "b_weight", "b_bias"}, deconv_attrs(5, 2, 2, 0, false)));
  g.nodes.push_back(make_node("b_clip", "clip", {"b"}, testing::attrs_of({{"a_min", 0.0}, {"a_max", 0.05}})));
  g.nodes.push_back(make_node("b_cat", "Concat", {"b_clip", "skip"}, testing::attrs_of({{"dim", int64_t{1}}})));
  Attrs depthwise = deconv_attrs(8, 3, 2, 1, true);
  depthwise.set("num_group", int64_t{8});
  depthwise.set("adj", std::vector<int64_t>{1, 1});
  g.nodes.push_back(make_node("c", "Deconvolution", {"data", "c_weight"}, depthwise));
  g.nodes.push_back(make_node("c_relu", "Activation", {"c"}, testing::attrs_of({{"act_type", std::string("relu")}})));
  g.outputs = {"a_relu", "b_cat", "c_relu"};
  return g;
}

void expect_matches(const std::string& target) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.compile.target = find_target(target);
  const VerifyReport report = verify_model(deconv_graph(), options);
  ASSERT_EQ(report.checks.size(), 3u);
  for (const auto& check : report.checks)
    EXPECT_LE(check.max_rel_error, 1e-5) << check.name << ": max abs error " << check.max_abs_error;
  EXPECT_TRUE(report.ok);
}

TEST(DeconvCodegen, EpiloguesMatchTheReference) { expect_matches("generic"); }

TEST(DeconvCodegen, EpiloguesMatchTheReferenceOnThisMachinesTarget) {
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine has no SIMD target";
  expect_matches(host_target().name);
}

// The CUDA kernels with the same epilogues, run on the CPU (cuda-host).
TEST(DeconvCodegen, EpiloguesMatchTheReferenceOnCudaHost) { expect_matches("cuda-host"); }

TEST(DeconvCodegen, KernelsTakeTheirEpilogues) {
  const auto files = generate_cpp(deconv_graph(), {"deconvs", "", ""});
  const std::string& cpp = files[1].content;
  // Both dense deconvolutions run as GEMM + col2im with their epilogue fused;
  // the depthwise one reads its weights as given.
  std::size_t gemm = 0;
  for (std::size_t at = cpp.find("hg_deconv2d_gemm("); at != std::string::npos; at = cpp.find("hg_deconv2d_gemm(", at + 1))
    ++gemm;
  EXPECT_EQ(gemm, 2u + 1u) << cpp;  // two calls and the kernel's definition
  EXPECT_NE(cpp.find("hg_deconv2d(data"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("hg_add_epilogue(residual, HgReluEpilogue())"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("HgClampEpilogue(0.0f, 0.0500000007f)"), std::string::npos) << cpp;
}

}  // namespace
}  // namespace hybgen
