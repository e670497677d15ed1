// verify_model as a library: the error measure, given and expected arrays,
// and what each kind of misuse or build failure reports.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "error_matchers.h"
#include "fusion_graphs.h"
#include "graph_builders.h"
#include "ops/gemm_pack.h"
#include "io/file_util.h"
#include "run_command.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;

VerifyOptions options_with_test_compiler() {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  return options;
}

TEST(CompareOutputs, RelativeErrorIsToTheLargestReferenceMagnitude) {
  // Off by 0.5 at 1.5: relative to the output's largest magnitude (10), not to 1.5.
  const auto [abs_err, rel_err] = compare_outputs({1.0f, 10.0f, -4.0f}, {1.5f, 10.0f, -4.0f});
  EXPECT_DOUBLE_EQ(abs_err, 0.5);
  EXPECT_DOUBLE_EQ(rel_err, 0.05);
  // A sign error counts in full.
  EXPECT_DOUBLE_EQ(compare_outputs({10.0f}, {-10.0f}).second, 2.0);
}

TEST(CompareOutputs, NanFailsAndZeroReferenceDoesNotDivideByZero) {
  EXPECT_TRUE(std::isinf(compare_outputs({1.0f, NAN, 0.0f}, {1.0f, 2.0f, 0.0f}).first));
  EXPECT_EQ(compare_outputs({0.0f, 0.0f}, {0.0f, 0.0f}).second, 0.0);
  EXPECT_GT(compare_outputs({1e-3f}, {0.0f}).second, 1.0);
  EXPECT_ERROR(compare_outputs({1.0f}, {1.0f, 2.0f}), "1 values against 2 reference values");
}

// The tutorial graph d = b * a + 1 on 10 elements: easy to compute by hand.
TEST(VerifyModel, PassesOnRandomInputsAndComparesExpectedArrays) {
  const Graph g = testing::tutorial_memory();
  VerifyOptions options = options_with_test_compiler();
  VerifyReport r = verify_model(g, options);
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.checks.size(), 1u);
  EXPECT_EQ(r.checks[0].name, "d");
  EXPECT_EQ(r.checks[0].shape, Shape{10});
  EXPECT_EQ(r.checks[0].against, "reference");
  EXPECT_LE(r.checks[0].max_rel_error, 1e-6);
  EXPECT_TRUE(r.build_dir.empty());

  NpyArray a{{10}, {}}, b{{10}, {}}, d{{10}, {}};
  for (int i = 0; i < 10; ++i) {
    a.data.push_back(0.5f * i);
    b.data.push_back(2.0f - i);
    d.data.push_back(0.5f * i * (2.0f - i) + 1.0f);
  }
  options.inputs = {{"a", a}, {"b", b}};
  options.expected = {{"d", d}};
  r = verify_model(g, options);
  EXPECT_TRUE(r.ok);
  ASSERT_EQ(r.checks.size(), 2u);
  EXPECT_EQ(r.checks[1].against, "expected");
  EXPECT_EQ(r.checks[1].max_abs_error, 0.0);

  d.data[3] += 1.0f;  // one wrong value: the expected check fails, the reference check still passes
  options.expected = {{"d", d}};
  r = verify_model(g, options);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.checks[0].ok);
  EXPECT_FALSE(r.checks[1].ok);
  EXPECT_FLOAT_EQ(r.checks[1].max_abs_error, 1.0);
}

TEST(VerifyModel, TheSeedChoosesTheInputsAndKeepBuildKeepsTheFolder) {
  const Graph g = testing::tutorial_memory();
  VerifyOptions options = options_with_test_compiler();
  options.keep_build = true;
  auto input_bytes = [&](uint64_t seed) {
    options.seed = seed;
    const VerifyReport r = verify_model(g, options);
    EXPECT_TRUE(r.ok);
    EXPECT_TRUE(fs::exists(r.build_dir + "/main.cpp")) << r.build_dir;
    const auto bytes = read_file_bytes(r.build_dir + "/in_0.bin");
    fs::remove_all(r.build_dir);
    return bytes;
  };
  const auto first = input_bytes(1);
  EXPECT_EQ(first.size(), 10 * sizeof(float));
  EXPECT_EQ(first, input_bytes(1));
  EXPECT_NE(first, input_bytes(2));
}

TEST(VerifyModel, ArraysThatDoNotFitTheGraphAreErrors) {
  const Graph g = testing::tutorial_memory();
  VerifyOptions options = options_with_test_compiler();
  options.inputs = {{"a", NpyArray{{2, 5}, std::vector<float>(10, 1.0f)}}};
  EXPECT_ERROR(verify_model(g, options), "input 'a' has shape (2, 5) in the array given, the model expects (10,)");

  options.inputs = {{"x", NpyArray{{10}, std::vector<float>(10, 1.0f)}}};
  EXPECT_ERROR(verify_model(g, options), "'x', which is not an input (inputs: a, b)");

  options.inputs.clear();
  options.expected = {{"c", NpyArray{{10}, std::vector<float>(10, 1.0f)}}};
  EXPECT_ERROR(verify_model(g, options), "'c', which is not an output (outputs: d)");

  options.expected = {{"d", NpyArray{{5}, std::vector<float>(5, 1.0f)}}};
  EXPECT_ERROR(verify_model(g, options), "expected array for output 'd' has shape (5,), the model gives (10,)");
}

TEST(VerifyModel, ExternalWeightsAreLoadedAndAStaleFileIsRefused) {
  VerifyOptions options = options_with_test_compiler();
  options.external_weights = true;
  options.keep_build = true;
  const VerifyReport r = verify_model(testing::seed_mlp(), options);
  EXPECT_TRUE(r.ok);
  ASSERT_FALSE(r.build_dir.empty());
  const std::string dir = r.build_dir, weights = dir + "/mlp.weights.bin", program = dir + "/program";
  EXPECT_FALSE(fs::exists(dir + "/mlp_weights.cpp"));
  const std::vector<uint8_t> bytes = read_file_bytes(weights);
  // The driver checks the file against the size and hash in the generated header.
  std::vector<uint8_t> changed = bytes;
  changed[changed.size() / 2] ^= 1;
  write_file_atomic(weights, changed);
  auto run = testing::run_command(testing::quoted(program) + " " + testing::quoted(dir));
  EXPECT_EQ(run.exit_code, 4) << run.output;
  EXPECT_NE(run.output.find("not the weights this code was generated with"), std::string::npos) << run.output;
  write_file_atomic(weights, std::vector<uint8_t>(bytes.begin(), bytes.end() - 4));
  run = testing::run_command(testing::quoted(program) + " " + testing::quoted(dir));
  EXPECT_EQ(run.exit_code, 4) << run.output;
  EXPECT_NE(run.output.find("shorter than the " + std::to_string(bytes.size()) + " bytes"), std::string::npos)
      << run.output;
  write_file_atomic(weights, bytes);
  EXPECT_EQ(testing::run_command(testing::quoted(program) + " " + testing::quoted(dir)).exit_code, 0);
  fs::remove_all(dir);
}

// Im2col tiles sized from the planned scratch (16 pixels, the last tile of
// each convolution partial) compute what whole columns do.
TEST(VerifyModel, SmallArenaTilesGiveTheReferenceResults) {
  VerifyOptions options = options_with_test_compiler();
  options.compile.small_arena = true;
  for (const std::string& target : {std::string("generic"), host_target().name}) {
    options.compile.target = find_target(target);
    const VerifyReport r = verify_model(testing::im2col_convolutions(), options);
    EXPECT_TRUE(r.ok) << target << ": relative error " << r.checks.at(0).max_rel_error;
  }
}

TEST(VerifyModel, CompilerFailureCarriesTheCompilerOutput) {
  VerifyOptions options = options_with_test_compiler();
  options.cxx_flags = "-std=c++11 -DHYBGEN_TEST_BROKEN=1 -include hybgen_no_such_header.h";
  const std::string message = testing::error_of([&] { verify_model(testing::tutorial_memory(), options); });
  EXPECT_NE(message.find("the generated code did not compile"), std::string::npos) << message;
  EXPECT_NE(message.find("hybgen_no_such_header.h"), std::string::npos) << message;  // from the compiler's output
}

}  // namespace
}  // namespace hybgen
