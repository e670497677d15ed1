// Fused kernels and shared buffers as generated C++: each graph of
// fusion_graphs.h compiles under the contract's strict flags and matches the
// reference interpreter (which runs the graph unoptimized, node by node).
#include <gtest/gtest.h>

#include <ostream>

#include "emit/generate.h"
#include "fusion_graphs.h"
#include "io/file_util.h"
#include "ops/gemm_pack.h"
#include "run_command.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

struct FusionCase {
  const char* name;
  Graph (*build)();
};

// gtest prints a parameter with this; test names then read "... # GetParam() = NAME".
inline void PrintTo(const FusionCase& c, std::ostream* os) { *os << c.name; }

class FusionCodegen : public ::testing::TestWithParam<FusionCase> {};

TEST_P(FusionCodegen, MatchesTheReference) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  const VerifyReport report = verify_model(GetParam().build(), options);
  ASSERT_FALSE(report.checks.empty());
  for (const auto& check : report.checks)
    EXPECT_LE(check.max_rel_error, 1e-5) << check.name << ": max abs error " << check.max_abs_error;
  EXPECT_TRUE(report.ok);
}

// The same, generated for this machine's SIMD path (--target), where it has
// one: packed weights in that path's panels, compiled with its -march.
TEST_P(FusionCodegen, MatchesTheReferenceOnThisMachinesTarget) {
  if (host_target().isa == Isa::kPortable) GTEST_SKIP() << "this machine has no SIMD target";
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.compile.target = host_target();
  const VerifyReport report = verify_model(GetParam().build(), options);
  for (const auto& check : report.checks)
    EXPECT_LE(check.max_rel_error, 1e-5) << check.name << ": max abs error " << check.max_abs_error;
  EXPECT_TRUE(report.ok);
}

INSTANTIATE_TEST_SUITE_P(Graphs, FusionCodegen,
                         ::testing::Values(FusionCase{"seed_mlp", [] { return testing::seed_mlp(); }},
                                           FusionCase{"tutorial_memory", testing::tutorial_memory},
                                           FusionCase{"resnet_basic_block", testing::resnet_basic_block},
                                           FusionCase{"conv_with_operands", testing::conv_with_operands},
                                           FusionCase{"concat_of_branches", testing::concat_of_branches},
                                           FusionCase{"unbalanced_branches", testing::unbalanced_branches},
                                           FusionCase{"clamped_layers", testing::clamped_layers}),
                         [](const ::testing::TestParamInfo<FusionCase>& info) { return std::string(info.param.name); });

TEST(FusionCodegen, PlacedConcatInputsAreNotCopied) {
  const auto files = generate_cpp(testing::concat_of_branches(), {"branches", "", ""});
  const std::string& cpp = files[1].content;
  EXPECT_EQ(cpp.find("hg_concat_part("), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("// input 1 was written in place by its producer"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("(view): flat (Flatten)"), std::string::npos) << cpp;
}

// int8 attention scores: q k^T by batch_dot, scaled by a lookup table fused
// as the product's epilogue (its table a static array in the lambda), then
// softmax; the generated code gives the reference's bits.
Graph int8_scores() {
  Graph g;
  g.name = "int8_scores";
  g.add_input("q", {{2, 6, 8}});
  g.add_input("k", {{2, 5, 8}});
  auto quantized = [](double scale, int64_t zero_point) {
    Attrs a;
    a.set("out_scale", scale);
    a.set("out_zero_point", zero_point);
    return a;
  };
  Attrs qa = quantized(0.02, 0), qk = quantized(0.025, 3);
  qa.set("out_dtype", std::string("int8"));
  qk.set("out_dtype", std::string("int8"));
  Attrs dot = quantized(0.05, -4), scale = quantized(0.02, -4), softmax = quantized(1.0 / 256, -128);
  dot.set("transpose_b", true);
  scale.set("scalar", 0.35);
  g.nodes.push_back(testing::make_node("q8", "quantize", {"q"}, qa));
  g.nodes.push_back(testing::make_node("k8", "quantize", {"k"}, qk));
  g.nodes.push_back(testing::make_node("scores", "batch_dot", {"q8", "k8"}, dot));
  g.nodes.push_back(testing::make_node("scaled", "_mul_scalar", {"scores"}, scale));
  g.nodes.push_back(testing::make_node("prob", "softmax", {"scaled"}, softmax));
  g.nodes.push_back(testing::make_node("y", "dequantize", {"prob"}));
  g.outputs = {"y"};
  return g;
}

TEST(FusionCodegen, Int8ProductsApplyLookupTablesAsTheirEpilogue) {
  const auto files = generate_cpp(int8_scores(), {"int8_scores", "", ""});
  const std::string& cpp = files[1].content;
  EXPECT_NE(cpp.find("auto epilogue = [=](long, long, int8_t v) -> int8_t {"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("static const int8_t v1_table[256] = {"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("hg_batch_matmul_q8("), std::string::npos) << cpp;
  for (const Target* target : {&find_target("generic"), &host_target()}) {
    VerifyOptions options;
    options.cxx = HYBGEN_CXX;
    options.compile.target = *target;
    const VerifyReport report = verify_model(int8_scores(), options);
    ASSERT_FALSE(report.checks.empty());
    for (const auto& check : report.checks) EXPECT_EQ(check.max_abs_error, 0.0) << target->name << " " << check.name;
    EXPECT_TRUE(report.ok) << target->name;
  }
}

TEST(FusionCodegen, EpilogueReadsOperandsByChannelAndIndex) {
  const auto files = generate_cpp(testing::conv_with_operands(), {"conv_operands", "", ""});
  const std::string& cpp = files[1].content;
  EXPECT_NE(cpp.find("auto epilogue = [=](long channel, long index, float v) -> float {"), std::string::npos) << cpp;
  EXPECT_NE(cpp.find("channel_[channel]"), std::string::npos) << cpp;  // the constant named `channel`, renamed
  EXPECT_NE(cpp.find("residual[index]"), std::string::npos) << cpp;
}

TEST(FusionCodegen, ClampsAndResidualAddsBecomeVectorEpilogues) {
  const auto files = generate_cpp(testing::clamped_layers(), {"clamped", "", ""});
  const std::string& cpp = files[1].content;
  // The 1x1 expansion, its clip and the depthwise step are one kernel: the
  // clip goes in as the activation object, the depthwise step's as epilogue.
  EXPECT_NE(cpp.find("const auto epilogue = HgClampEpilogue(-0.100000001f, 0.300000012f);  // dw1_clip (clip)"), std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("geometry, expand_dw1_scratch, HgClampEpilogue(-0.25f, 0.5f), epilogue, pool);"),
            std::string::npos)
      << cpp;
  EXPECT_NE(cpp.find("const auto epilogue = HgReluEpilogue();  // dw2_relu (Activation)"), std::string::npos) << cpp;
  EXPECT_EQ(cpp.find("auto epilogue = [=]"), std::string::npos) << cpp;
  // A residual add, then a relu: the add loads the other operand's vector.
  const auto resnet = generate_cpp(testing::resnet_basic_block(), {"block", "", ""});
  EXPECT_NE(resnet[1].content.find("= hg_add_epilogue(data, HgReluEpilogue());"), std::string::npos)
      << resnet[1].content;
  // Anything else stays a lambda: per-channel or broadcast operands, a
  // multiply after the add.
  const auto operands = generate_cpp(testing::conv_with_operands(), {"operands", "", ""});
  EXPECT_NE(operands[1].content.find("auto epilogue = [=]"), std::string::npos) << operands[1].content;
  EXPECT_EQ(operands[1].content.find("epilogue = hg_add_epilogue("), std::string::npos) << operands[1].content;
}

// A run-time batch: a dense layer takes every item's rows at once
// (OpKernel::rows_follow_batch), its fused epilogue with them. An epilogue
// operand that holds no items but spans more than one channel row (a
// positional table added per token) is not the same for every item's rows
// at that index, so such a kernel runs per item; a per-channel one and a
// residual that holds items run with all rows. Each at 1, 2 and 3 items.
TEST(FusionCodegen, ARunTimeBatchKeepsEpilogueOperandsInTheirRows) {
  for (const bool table : {true, false}) {
    Graph g;
    g.add_input("data", {{1, 4, 8}});
    g.add_constant("w", Constant::f32({6, 8}, testing::seeded_values(48, 1)));
    g.add_constant("b", Constant::f32({6}, testing::seeded_values(6, 2)));
    g.add_constant("pos",
                   Constant::f32(table ? Shape{1, 4, 6} : Shape{1, 1, 6}, testing::seeded_values(table ? 24 : 6, 3)));
    g.nodes.push_back(testing::make_node("fc", "FullyConnected", {"data", "w", "b"},
                                         testing::attrs_of({{"num_hidden", int64_t{6}}, {"flatten", false}})));
    g.nodes.push_back(testing::make_node("placed", "broadcast_add", {"fc", "pos"}));
    g.outputs = {"placed"};
    g.batch = BatchRange{1, 3, {"data"}};
    VerifyOptions options;
    const VerifyReport report = verify_model(g, options);
    ASSERT_EQ(report.checks.size(), 3u);
    for (const OutputCheck& c : report.checks)
      EXPECT_TRUE(c.ok) << (table ? "table" : "per channel") << " at " << c.batch << " items: " << c.max_rel_error;
  }
}

TEST(FusionCodegen, CodeForATargetWillNotBuildWithoutItsInstructions) {
  // Weights packed for AVX-512 panels must never run through another path:
  // built for plain x86-64, the code stops at an #error naming the target.
  const TempDir dir("hybgen-target-test");
  write_generated(generate_cpp(testing::seed_mlp(), {"mlp", "", ""}, {true, nullptr, find_target("x86-64-v4")}),
                  dir.path());
  const auto r = testing::run_command(std::string(HYBGEN_CXX) + " -std=c++11 -march=x86-64 -c " +
                                      testing::quoted(dir.path() + "/mlp.cpp") + " -o /dev/null");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("generated with --target x86-64-v4"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hybgen
