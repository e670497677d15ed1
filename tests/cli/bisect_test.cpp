// `hybgen verify --bisect`: the generated code, built with kernel hooks,
// compared kernel by kernel with the reference interpreter on the same
// optimized graph. A kernel broken on purpose (an op registered in this test
// binary only, whose C++ printer is off at one element) is the one named,
// with its node, value and worst element; correct models bisect to no
// divergence; the CLI prints the report and exits 1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "emit/cpp_emitter.h"
#include "error_matchers.h"
#include "fusion_graphs.h"
#include "graph_builders.h"
#include "io/file_util.h"
#include "io/model_json.h"
#include "ops/op.h"
#include "run_command.h"
#include "verify/bisect.h"
#include "verify/verify.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;
using testing::attrs_of;
using testing::make_node;
using testing::quoted;
using testing::run_command;
using testing::seeded_values;

// The element the broken op's generated code gets wrong, and by how much.
constexpr int64_t kBrokenElement = 29;
constexpr float kBrokenOffset = 0.25f;

// An identity whose reference is right and whose C++ kernel adds
// kBrokenOffset to one element: a subtly wrong kernel. Opaque, so it is a
// kernel of its own.
const OpRegistrar broken_op([] {
  OpDef d;
  d.name = "_test_bisect_broken";
  d.summary = "identity; the C++ kernel is wrong at one element (bisect tests)";
  d.input_names = {"data"};
  d.fusion = FusionClass::kOpaque;
  d.infer = [](const Attrs&, const std::vector<TensorType>& in) { return std::vector<TensorType>{in[0]}; };
  d.reference = [](const KernelIO& io) {
    const int64_t n = io.out_types[0].num_elements();
    for (int64_t i = 0; i < n; ++i) io.output<float>(0)[i] = io.input<float>(0)[i];
  };
  return d;
}());
const KernelRegistrar broken_cpp(Backend::kCpp, "_test_bisect_broken", OpKernel{[](const EmitContext& ctx) {
                                   const std::string n = std::to_string(ctx.out_types[0].num_elements());
                                   KernelCall call;
                                   call.code = "for (long i = 0; i < " + n + "; ++i) " + ctx.out[0] +
                                               "[i] = " + ctx.in[0] + "[i];\n" + ctx.out[0] + "[" +
                                               std::to_string(kBrokenElement) +
                                               "] += " + std::to_string(kBrokenOffset) + "f;\n";
                                   return call;
                                 }});

// data (1, 2, 6, 6) -> conv (4 filters, 3x3, pad 1) -> broken -> relu -> dense (3).
Graph broken_in_the_middle() {
  Graph g;
  g.name = "bisect";
  g.add_input("data", {{1, 2, 6, 6}});
  g.add_constant("conv_weight", Constant::f32({4, 2, 3, 3}, seeded_values(4 * 2 * 9, 91)));
  g.add_constant("conv_bias", Constant::f32({4}, seeded_values(4, 92)));
  g.add_constant("dense_weight", Constant::f32({3, 144}, seeded_values(3 * 144, 93)));
  g.add_constant("dense_bias", Constant::f32({3}, seeded_values(3, 94)));
  g.nodes.push_back(make_node("conv", "Convolution", {"data", "conv_weight", "conv_bias"},
                              testing::conv_attrs(4, 3, 1, false)));
  g.nodes.push_back(make_node("broken", "_test_bisect_broken", {"conv"}));
  g.nodes.push_back(make_node("relu", "Activation", {"broken"}, attrs_of({{"act_type", std::string("relu")}})));
  g.nodes.push_back(make_node("dense", "FullyConnected", {"relu", "dense_weight", "dense_bias"},
                              attrs_of({{"num_hidden", int64_t{3}}})));
  g.outputs = {"dense"};
  return g;
}

VerifyOptions options_with_test_compiler(BisectMode mode) {
  VerifyOptions options;
  options.cxx = HYBGEN_CXX;
  options.bisect = mode;
  return options;
}

TEST(Bisect, NamesTheBrokenKernelAndItsNode) {
  // The outputs fail, so verify builds again with the hooks and bisects.
  VerifyOptions options = options_with_test_compiler(BisectMode::kOnFailure);
  options.keep_build = true;
  const VerifyReport r = verify_model(broken_in_the_middle(), options);
  EXPECT_FALSE(r.ok);
  // Both builds kept: the second wrote the dump.
  ASSERT_FALSE(r.build_dir.empty());
  ASSERT_FALSE(r.bisect.build_dir.empty());
  EXPECT_NE(r.bisect.build_dir, r.build_dir);
  EXPECT_FALSE(fs::exists(r.build_dir + "/kernels.bin"));
  EXPECT_TRUE(fs::exists(r.bisect.build_dir + "/kernels.bin"));
  fs::remove_all(r.build_dir);
  fs::remove_all(r.bisect.build_dir);
  ASSERT_TRUE(r.bisect.ran);
  ASSERT_TRUE(r.bisect.first.has_value()) << bisect_text(r.bisect);
  const KernelDivergence& d = *r.bisect.first;
  EXPECT_EQ(d.kernel, 1);  // after the convolution
  EXPECT_EQ(d.kind, "op");
  EXPECT_EQ(d.nodes, std::vector<std::string>{"broken"});
  EXPECT_EQ(d.ops, std::vector<std::string>{"_test_bisect_broken"});
  EXPECT_EQ(d.value, "broken");
  EXPECT_EQ(d.shape, (Shape{1, 4, 6, 6}));
  EXPECT_EQ(d.worst_index, kBrokenElement);
  EXPECT_EQ(d.worst_position, (Shape{0, 0, 4, 5}));  // 29 = 4 * 6 + 5
  EXPECT_NEAR(d.max_abs_error, kBrokenOffset, 1e-5);
  EXPECT_NEAR(d.actual - d.expected, kBrokenOffset, 1e-5);
  EXPECT_GT(d.max_rel_error, 1e-5);
  EXPECT_EQ(r.bisect.values_checked, 2);  // the convolution's, then the broken one's
  const std::string text = bisect_text(r.bisect);
  EXPECT_NE(text.find("bisect: kernel 1 of "), std::string::npos) << text;
  EXPECT_NE(text.find("'broken' (_test_bisect_broken)"), std::string::npos) << text;
  EXPECT_NE(text.find("worst element 29 at (0, 0, 4, 5)"), std::string::npos) << text;
}

TEST(Bisect, CorrectModelsBisectToNoDivergence) {
  // Views, a Concat whose producers wrote in place, and a dense layer; then
  // fused epilogues: every stored value is compared, none diverges.
  for (const Graph& g : {testing::concat_of_branches(), testing::conv_with_operands()}) {
    const VerifyReport r = verify_model(g, options_with_test_compiler(BisectMode::kAlways));
    EXPECT_TRUE(r.ok) << g.name;
    ASSERT_TRUE(r.bisect.ran);
    EXPECT_FALSE(r.bisect.first.has_value()) << g.name << ": " << bisect_text(r.bisect);
    EXPECT_GT(r.bisect.values_checked, 0);
    EXPECT_GE(r.bisect.values_checked, r.bisect.kernels);  // each stores at least one value
    EXPECT_NE(bisect_text(r.bisect).find("bisect: no kernel diverges"), std::string::npos);
  }
}

TEST(Bisect, HooksAreAnEmitOptionAbsentFromNormalOutput) {
  EXPECT_EQ(VerifyOptions{}.bisect, BisectMode::kOff);
  EXPECT_EQ(bisect_text(BisectReport{}), "");
  const CompiledGraph compiled = compile_graph(broken_in_the_middle());
  CppEmitOptions plain{"bisect", "bisect", "bisect"};
  for (const auto& f : emit_cpp(compiled, plain)) EXPECT_EQ(f.content.find("hg_after_kernel"), std::string::npos);
  CppEmitOptions hooked = plain;
  hooked.kernel_hooks = true;
  const std::string code = emit_cpp(compiled, hooked)[1].content;
  EXPECT_NE(code.find("hg_after_kernel(1, 0, "), std::string::npos) << code;
}

TEST(Bisect, ADumpThatDoesNotFollowTheKernelsIsAnError) {
  const CompiledGraph compiled = compile_graph(broken_in_the_middle());
  const auto reference = reference_kernel_values(
      compiled, {{"data", Tensor::random_normal({1, 2, 6, 6}, 0.0f, 1.0f, 3)}});
  TempDir tmp("hybgen-bisect-test");
  const std::string path = tmp.path() + "/kernels.bin";
  EXPECT_ERROR(bisect_dump(compiled, reference, path, 1e-5), "kernels.bin");  // missing

  auto record = [](int64_t kernel, int64_t output, const std::vector<float>& values) {
    std::vector<uint8_t> bytes(3 * sizeof(int64_t) + values.size() * sizeof(float));
    const int64_t header[3] = {kernel, output, static_cast<int64_t>(values.size() * sizeof(float))};
    std::memcpy(bytes.data(), header, sizeof header);
    if (!values.empty()) std::memcpy(bytes.data() + sizeof header, values.data(), values.size() * sizeof(float));
    return bytes;
  };
  const std::vector<float>& conv = reference.at("conv");
  write_file_atomic(path, std::vector<uint8_t>{1, 2, 3});
  EXPECT_ERROR(bisect_dump(compiled, reference, path, 1e-5), "ends before kernel 0's output 0");
  write_file_atomic(path, record(1, 0, conv));
  EXPECT_ERROR(bisect_dump(compiled, reference, path, 1e-5), "where kernel 0 output 0 (576 bytes) belongs");
  std::vector<uint8_t> cut = record(0, 0, conv);
  cut.resize(cut.size() - 4);
  write_file_atomic(path, cut);
  EXPECT_ERROR(bisect_dump(compiled, reference, path, 1e-5), "ends inside kernel 0's output 0");

  // Every record right, then one too many.
  std::vector<uint8_t> all;
  for (std::size_t k = 0; k < compiled.kernels.size(); ++k)
    for (std::size_t j = 0; j < compiled.kernels[k].outputs.size(); ++j) {
      const auto r = record(static_cast<int64_t>(k), static_cast<int64_t>(j), reference.at(compiled.kernels[k].outputs[j]));
      all.insert(all.end(), r.begin(), r.end());
    }
  write_file_atomic(path, all);
  const BisectReport ok = bisect_dump(compiled, reference, path, 1e-5);
  EXPECT_TRUE(ok.ran);
  EXPECT_FALSE(ok.first.has_value());
  const auto extra = record(0, 0, {1.0f});
  all.insert(all.end(), extra.begin(), extra.end());
  write_file_atomic(path, all);
  EXPECT_ERROR(bisect_dump(compiled, reference, path, 1e-5), "more records than the model has kernel outputs");
}

TEST(Bisect, CompareValuesFindsTheWorstElementAndCountsNanAsInfinite) {
  const std::vector<float> ref = {1.0f, -4.0f, 2.0f, 0.5f};
  std::vector<float> got = {1.0f, -4.0f, 2.5f, 0.25f};
  ValueComparison c = compare_values(got.data(), ref.data(), 4);
  EXPECT_EQ(c.worst_index, 2);
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(c.max_rel_error, 0.125);
  got[3] = NAN;
  c = compare_values(got.data(), ref.data(), 4);
  EXPECT_EQ(c.worst_index, 3);
  EXPECT_TRUE(std::isinf(c.max_abs_error));
  EXPECT_EQ(unflatten_index(29, {1, 4, 6, 6}), (Shape{0, 0, 4, 5}));
  EXPECT_EQ(unflatten_index(0, {}), Shape{});
}

class BisectCli : public ::testing::Test {
 protected:
  TempDir tmp{"hybgen-bisect-cli-test"};
  std::string path(const std::string& name) const { return tmp.path() + "/" + name; }
  testing::CommandResult hybgen(const std::string& args, const std::string& env = "") {
    return run_command(env + quoted(HYBGEN_BINARY) + " " + args);
  }

  // data (2, 8) -> softmax -> scaled (* 0.375) -> dense (3): three kernels,
  // the middle one an elementwise loop whose constant the wrapper below edits.
  std::string model() {
    Graph g;
    g.name = "scaled";
    g.add_input("data", {{2, 8}});
    g.add_constant("w", Constant::f32({3, 8}, seeded_values(24, 5)));
    g.nodes.push_back(make_node("prob", "softmax", {"data"}));
    g.nodes.push_back(make_node("scaled", "_mul_scalar", {"prob"}, attrs_of({{"scalar", 0.375}})));
    g.nodes.push_back(make_node("fc", "FullyConnected", {"scaled", "w"},
                                attrs_of({{"num_hidden", int64_t{3}}, {"no_bias", true}})));
    g.outputs = {"fc"};
    save_model(g, path("scaled"));
    return path("scaled.json");
  }

  // A compiler that multiplies by 0.5 where the generated code says 0.375:
  // the elementwise kernel is wrong in every build, hooked or not.
  std::string breaking_compiler() {
    const std::string script = path("breaking-cxx.sh");
    std::ofstream(script) << "#!/bin/sh\n"
                             "for a in \"$@\"; do\n"
                             "  case \"$a\" in */scaled.cpp) sed -i 's/0\\.375f/0.5f/g' \"$a\" ;; esac\n"
                             "done\n"
                             "exec " HYBGEN_CXX " \"$@\"\n";
    fs::permissions(script, fs::perms::owner_all);
    return "CXX=" + quoted(script) + " ";
  }
};

TEST_F(BisectCli, AFailingVerifyNamesTheKernelAndExitsNonZero) {
  const std::string m = model();
  auto r = hybgen("verify " + quoted(m), breaking_compiler());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_NE(r.output.find("bisect: kernel 1 of 3 (elementwise) diverges first: 'scaled' (_mul_scalar)"),
            std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("value 'scaled' (2, 8)"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("verify: FAIL"), std::string::npos) << r.output;

  r = hybgen("verify --no-bisect " + quoted(m), breaking_compiler());
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_EQ(r.output.find("bisect:"), std::string::npos) << r.output;
}

TEST_F(BisectCli, BisectOnACorrectModelPassesAndOtherBackendsAreRefused) {
  const std::string m = model();
  auto r = hybgen("verify --bisect " + quoted(m));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("bisect: no kernel diverges: the 3 values the 3 kernels store"), std::string::npos)
      << r.output;
  EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;

  r = hybgen("verify --bisect --target cuda-host " + quoted(m));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--bisect compares the kernels of backends that print hooks"), std::string::npos) << r.output;
  r = hybgen("verify --bisect --target cortex-m4 " + quoted(m));
  EXPECT_NE(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--bisect needs a program that writes files"), std::string::npos) << r.output;
  r = hybgen("verify --bisect --no-bisect " + quoted(m));
  EXPECT_NE(r.exit_code, 0) << r.output;
}

}  // namespace
}  // namespace hybgen
