// ONNX's ConvInteger and MatMulInteger: the pattern ONNX Runtime's dynamic
// quantization writes (QuantizeLinear here, where ORT computes the scale at
// run time: -> ConvInteger / MatMulInteger -> Cast -> Mul), made and run by
// ONNX Runtime (scripts/make_integer_ops_test_models.py), gives ORT's outputs
// exactly through the generated code; operands and zero points of the wrong
// dtype or shape are refused naming the node.
#include <gtest/gtest.h>

#include <functional>

#include "io/file_util.h"
#include "ir/error.h"
#include "onnx/onnx_builder.h"
#include "run_command.h"

namespace hybgen {
namespace {

using testing::kHybgen;
using testing::quoted;
using testing::run_command;
using testing_onnx::OnnxBuilder;

const std::string kDir = HYBGEN_SOURCE_DIR "/tests/data/onnx/integer/";

testing::CommandResult hybgen(const std::string& args) { return run_command(quoted(kHybgen) + " " + args); }

// The sums are exact and the Cast and Mul are ORT's float operations, so
// the outputs are ORT's bit for bit, on the portable target and this machine's.
void check_matches_onnx_runtime(const std::string& name) {
  for (const std::string target : {" --target generic", ""}) {  // "": this machine's best target
    SCOPED_TRACE(target);
    const auto r =
        hybgen("verify " + quoted(kDir + name + ".onnx") + target + " --input x=" + quoted(kDir + name + "_x.npy") +
               " --expected y=" + quoted(kDir + name + "_y.npy") + " --tolerance 0");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("PASS"), std::string::npos) << r.output;
  }
}

TEST(OnnxIntegerOps, ConvIntegerCastMulMatchesOnnxRuntime) { check_matches_onnx_runtime("conv_integer"); }

TEST(OnnxIntegerOps, MatMulIntegerCastMulMatchesOnnxRuntime) { check_matches_onnx_runtime("matmul_integer"); }

// An 8-bit integer initializer (TensorProto::UINT8 = 2, INT8 = 3).
void integer_initializer(OnnxBuilder& b, const std::string& name, const Shape& shape, int32_t dtype,
                         const std::vector<int>& values) {
  onnx::TensorProto& t = *b.graph().add_initializer();
  t.set_name(name);
  t.set_data_type(dtype);
  for (int64_t d : shape) t.add_dims(d);
  std::string raw;
  for (int v : values) raw.push_back(static_cast<char>(v));
  t.set_raw_data(raw);
}

// A float input made uint8 by a QuantizeLinear, into `op` with weight `w`
// and the zero points named (empty: absent).
std::string import_error(const std::string& op, const Shape& x, const std::vector<std::string>& zero_points,
                         const std::function<void(OnnxBuilder&)>& add_initializers) {
  OnnxBuilder b(13);
  b.input("x", x);
  b.initializer("s", {}, {0.1f});
  integer_initializer(b, "z", {}, 2, {128});
  add_initializers(b);
  b.node("QuantizeLinear", {"x", "s", "z"}, {"xq"}, "quant");
  std::vector<std::string> in = {"xq", "w"};
  in.insert(in.end(), zero_points.begin(), zero_points.end());
  b.node(op, in, {"acc"}, "integer_op");
  OnnxBuilder::attr(b.node("Cast", {"acc"}, {"y"}, "cast"), "to", int64_t{onnx::TensorProto::FLOAT});
  b.output("y");
  try {
    b.import();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(OnnxIntegerOps, WrongZeroPointsAreRefusedNamingTheNode) {
  // A zero point of another dtype than its operand.
  std::string e = import_error("ConvInteger", {1, 2, 4, 4}, {"z", "wz"}, [](OnnxBuilder& b) {
    integer_initializer(b, "w", {3, 2, 1, 1}, 3, {1, 2, 3, 4, 5, 6});
    integer_initializer(b, "wz", {}, 2, {0});
  });
  EXPECT_NE(e.find("node 'integer_op' (ConvInteger): input 3 (w_zero_point) is uint8, its operand int8"),
            std::string::npos)
      << e;
  // A weight zero point neither one value nor one per output channel.
  e = import_error("ConvInteger", {1, 2, 4, 4}, {"z", "wz"}, [](OnnxBuilder& b) {
    integer_initializer(b, "w", {3, 2, 1, 1}, 3, {1, 2, 3, 4, 5, 6});
    integer_initializer(b, "wz", {2}, 3, {0, 1});
  });
  EXPECT_NE(e.find("(ConvInteger): input 3 (w_zero_point) has shape (2,); it must hold one value or one per output "
                   "channel (3)"),
            std::string::npos)
      << e;
  // MatMulInteger: b's zero point with as many values as a's rows, not b's columns.
  e = import_error("MatMulInteger", {5, 2}, {"z", "bz"}, [](OnnxBuilder& b) {
    integer_initializer(b, "w", {2, 3}, 3, {1, 2, 3, 4, 5, 6});
    integer_initializer(b, "bz", {5}, 3, {0, 1, 2, 3, 4});
  });
  EXPECT_NE(e.find("node 'integer_op' (MatMulInteger): input 3 (b_zero_point) has shape (5,)"), std::string::npos) << e;
  // A float operand (MatMulInteger takes 8-bit integers).
  OnnxBuilder b(13);
  b.input("x", {2, 2});
  b.initializer("w", {2, 2}, {1, 2, 3, 4});
  b.node("MatMulInteger", {"x", "w"}, {"y"}, "mm");
  b.output("y");
  try {
    b.import();
    ADD_FAILURE() << "a float operand was accepted";
  } catch (const Error& err) {
    EXPECT_NE(std::string(err.what()).find("node 'mm' (MatMulInteger): input 0 (A) is float32, expected int8 or uint8"),
              std::string::npos)
        << err.what();
  }
}

}  // namespace
}  // namespace hybgen
