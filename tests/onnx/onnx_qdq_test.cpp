// Quantized ONNX models: a QDQ model written by ONNX Runtime's quantize_static
// (scripts/make_qdq_test_model.py: int8 activations and per-channel weights)
// becomes int8 kernels whose outputs match ONNX Runtime's within one step;
// quantization parameters computed at run time are refused naming the node.
#include <gtest/gtest.h>

#include <fstream>

#include "io/file_util.h"
#include "onnx/onnx_builder.h"
#include "run_command.h"

namespace hybgen {
namespace {

using testing::kHybgen;
using testing::quoted;
using testing::run_command;
using testing_onnx::OnnxBuilder;

const std::string kDir = HYBGEN_SOURCE_DIR "/tests/data/onnx/qdq/";

testing::CommandResult hybgen(const std::string& args) { return run_command(quoted(kHybgen) + " " + args); }

TEST(OnnxQdq, QuantizeStaticModelMatchesOnnxRuntime) {
  const std::string model = quoted(kDir + "tiny_qdq.onnx");
  // Every layer is int8: the only dequantize left is the output's.
  auto r = hybgen("inspect " + model);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find(" dequantize "), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find(" dequantize "), r.output.rfind(" dequantize ")) << r.output;
  // One output step (0.048; --tolerance is relative to the largest value,
  // 2.85): ONNX Runtime rounds half to even where hybgen rounds half away
  // from zero, and computes the requantization in float.
  r = hybgen("verify " + model + " --input x=" + quoted(kDir + "x.npy") + " --expected y=" + quoted(kDir + "y.npy") +
             " --tolerance 0.017");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

// QLinearConv with uint8 weights at zero point 128 (shifted to int8 at import)
// and an int32 bias, between QuantizeLinear and DequantizeLinear.
TEST(OnnxQdq, QLinearConvMatchesOnnxRuntime) {
  // One output step: 0.05, the largest value 4.15.
  const auto r = hybgen("verify " + quoted(kDir + "qlinear_conv.onnx") + " --input x=" + quoted(kDir + "x.npy") +
                        " --expected y=" + quoted(kDir + "qlinear_conv_y.npy") + " --tolerance 0.012");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

// MatMul on a 3-D input and Add of a constant vector, QDQ: an int8 dense
// layer and TFLite's quantized add.
TEST(OnnxQdq, MatMulAddMatchesOnnxRuntime) {
  auto r = hybgen("inspect " + quoted(kDir + "matmul_add_qdq.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.output.find(" dequantize "), r.output.rfind(" dequantize ")) << r.output;
  // One output step: 0.022, the largest value 2.62.
  r = hybgen("verify " + quoted(kDir + "matmul_add_qdq.onnx") + " --input x=" + quoted(kDir + "matmul_add_x.npy") +
             " --expected y=" + quoted(kDir + "matmul_add_y.npy") + " --tolerance 0.0084");
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
}

TEST(OnnxQdq, ScaleComputedAtRunTimeIsRefusedNamingTheNode) {
  TempDir tmp{"hybgen-onnx-qdq-test"};
  OnnxBuilder b(13);
  b.input("x", {1, 4});
  b.input("s", {1});
  b.node("QuantizeLinear", {"x", "s"}, {"q"}, "quant");
  b.node("DequantizeLinear", {"q", "s"}, {"y"}, "dequant");
  b.output("y");
  const std::string path = tmp.path() + "/bad.onnx";
  std::ofstream(path, std::ios::binary) << b.bytes();
  const auto r = hybgen("inspect " + quoted(path));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("node 'quant' (QuantizeLinear): input 1 ('s') must be a constant known at import"),
            std::string::npos)
      << r.output;
}

}  // namespace
}  // namespace hybgen
