// ONNX files through the hybgen CLI: generate, verify (generated code against
// the reference, and against expected arrays), inspect, import; symbolic
// batch dims from --shape; unsupported ops listed in one message, no output.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "io/file_util.h"
#include "io/npy.h"
#include "onnx/onnx_builder.h"
#include "run_command.h"

namespace hybgen {
namespace {

namespace fs = std::filesystem;
using testing::quoted;
using testing::run_command;
using testing_onnx::OnnxBuilder;
using testing_onnx::seeded;

using testing::kHybgen;

// A small conv net as torch.onnx.export writes it: symbolic batch, the
// flatten as Shape/Gather/Unsqueeze/Concat/Reshape, Gemm with transB.
OnnxBuilder conv_net() {
  OnnxBuilder b(17);
  b.input("input", {-1, 3, 8, 8});
  b.initializer("conv.weight", {4, 3, 3, 3}, seeded(108, 1));
  b.initializer("conv.bias", {4}, seeded(4, 2));
  b.initializer("fc.weight", {10, 64}, seeded(640, 3));
  b.initializer("fc.bias", {10}, seeded(10, 4));
  auto& conv = b.node("Conv", {"input", "conv.weight", "conv.bias"}, {"c"}, "/conv/Conv");
  OnnxBuilder::attr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
  OnnxBuilder::attr(conv, "kernel_shape", std::vector<int64_t>{3, 3});
  b.node("Relu", {"c"}, {"r"}, "/relu/Relu");
  auto& pool = b.node("MaxPool", {"r"}, {"p"}, "/pool/MaxPool");
  OnnxBuilder::attr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  OnnxBuilder::attr(pool, "strides", std::vector<int64_t>{2, 2});
  b.node("Shape", {"p"}, {"s"}, "/Shape");
  b.constant_i64("zero", {}, {0});
  auto& g = b.node("Gather", {"s", "zero"}, {"n"}, "/Gather");
  OnnxBuilder::attr(g, "axis", 0);
  b.constant_i64("axes", {1}, {0});
  b.node("Unsqueeze", {"n", "axes"}, {"n1"}, "/Unsqueeze");
  b.constant_i64("minus1", {1}, {-1});
  auto& cat = b.node("Concat", {"n1", "minus1"}, {"target"}, "/Concat");
  OnnxBuilder::attr(cat, "axis", 0);
  b.node("Reshape", {"p", "target"}, {"flat"}, "/Reshape");
  auto& fc = b.node("Gemm", {"flat", "fc.weight", "fc.bias"}, {"output"}, "/fc/Gemm");
  OnnxBuilder::attr(fc, "transB", 1);
  b.output("output");
  return b;
}

class OnnxCli : public ::testing::Test {
 protected:
  TempDir tmp{"hybgen-onnx-cli-test"};
  std::string path(const std::string& name) const { return tmp.path() + "/" + name; }
  testing::CommandResult hybgen(const std::string& args) { return run_command(quoted(kHybgen) + " " + args); }
  std::string write_model(const OnnxBuilder& b, const std::string& name) {
    std::ofstream(path(name), std::ios::binary) << b.bytes();
    return path(name);
  }
};

TEST_F(OnnxCli, ConvNetGeneratesCompilesAndVerifies) {
  const std::string model = write_model(conv_net(), "convnet.onnx");

  // The batch is symbolic: without --shape, a clear error and no output.
  auto r = hybgen(quoted(model) + " -o " + quoted(path("out")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("input 'input': dimension 0 of 4 is symbolic ('N'): pass --shape input="), std::string::npos)
      << r.output;
  EXPECT_FALSE(fs::exists(path("out")));

  r = hybgen(quoted(model) + " --shape input=2,3,8,8 -o " + quoted(path("out")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("out/convnet.h")));
  EXPECT_TRUE(fs::exists(path("out/convnet.cpp")));

  r = hybgen("inspect " + quoted(model) + " --shape input=2,3,8,8");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("/fc/Gemm"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("Shape"), std::string::npos) << "shape arithmetic is folded at import:\n" << r.output;

  r = hybgen("import " + quoted(model) + " --shape input=2,3,8,8 -o " + quoted(path("imported")));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::exists(path("imported.json")));
  EXPECT_TRUE(fs::exists(path("imported.safetensors")));

  // The generated code against the reference, the batch from the --input array.
  write_npy(path("x.npy"), {{2, 3, 8, 8}, seeded(384, 7)});
  r = hybgen("verify " + quoted(model) + " --input input=" + quoted(path("x.npy")));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("verify: PASS"), std::string::npos) << r.output;
}

TEST_F(OnnxCli, UnsupportedOpsAreListedInOneMessage) {
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  b.node("Frobnicate", {"x"}, {"a"}, "frob");
  b.node("Relu", {"a"}, {"b"}, "relu");
  b.node("Mystify", {"b"}, {"y"}, "myst");
  b.output("y");
  const std::string model = write_model(b, "bad.onnx");
  const auto r = hybgen(quoted(model) + " -o " + quoted(path("out")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("2 problems before conversion"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unsupported op Frobnicate (1 node: 'frob')"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("unsupported op Mystify (1 node: 'myst')"), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(path("out")));
}

TEST_F(OnnxCli, WeightsFlagsAreForOtherFormats) {
  const std::string model = write_model(conv_net(), "convnet.onnx");
  auto r = hybgen(quoted(model) + " --shape input=1,3,8,8 --weights x.safetensors -o " + quoted(path("out")));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("--weights is not for ONNX files"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace hybgen
